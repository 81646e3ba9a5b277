/**
 * What a push writes for registries without the referrers API. Pure.
 * - The OCI referrers tag scheme: an image index under the tag `sha256-<hex of the subject>` that
 *   lists the subject's referrers, each as the referrers API would (artifactType, annotations).
 * - cosign's legacy signature tag `sha256-<hex>.sig` (what `cosign verify --key` and Kyverno read):
 *   an image manifest whose layers are simple-signing payloads, each with its signature annotation,
 *   over an image config whose rootfs.diff_ids are those layers' digests, in the JSON form cosign
 *   (go-containerregistry's empty image plus appended layers) writes.
 * Merges keep what the tag already lists and add only what is missing, so a second push writes nothing.
 */
import { AicrError } from "../../core/errors.ts";
import { canonicalJson, type Descriptor, type Index, type Manifest, MEDIA, sha256Digest } from "../_oci.ts";
import { COSIGN_SIGNATURE_ANNOTATION, referrersTag } from "../_referrers.ts";

/** cosign's legacy tag for the signatures of `digest`. */
export const cosignSignatureTag = (digest: string): string => `${referrersTag(digest)}.sig`;

/** The descriptor a referrers list names a manifest by: its artifactType (else its config's type) and annotations. */
export function referrerDescriptor(digest: string, size: number, manifest: Manifest): Descriptor {
  return {
    mediaType: manifest.mediaType ?? MEDIA.manifest,
    digest,
    size,
    artifactType: manifest.artifactType ?? manifest.config.mediaType,
    ...(manifest.annotations && Object.keys(manifest.annotations).length > 0
      ? { annotations: manifest.annotations }
      : {}),
  };
}

const unexpected = (tag: string, registry: string, what: string): AicrError =>
  new AicrError("CONFLICT", `The tag ${tag} on ${JSON.stringify(registry)} holds ${what}`, {
    remedy: `aicr keeps that tag for referrers (SBOMs, provenance, signatures): delete it from the repository and push again`,
    context: { registry, tag },
  });

function parse<T>(bytes: Uint8Array, tag: string, registry: string): T {
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
    if (typeof value === "object" && value !== null) return value as T;
  } catch {
    // reported below
  }
  throw unexpected(tag, registry, "something that is not JSON");
}

/**
 * The index for the referrers tag of a subject: `existing` (its bytes, or undefined when the tag is
 * absent) with the descriptors of `add` it lacks appended. Undefined when nothing is missing.
 */
export function mergeReferrersIndex(
  existing: Uint8Array | undefined,
  add: readonly Descriptor[],
  tag: string,
  registry: string,
): Uint8Array | undefined {
  const index: Index = existing
    ? parse<Index>(existing, tag, registry)
    : { schemaVersion: 2, mediaType: MEDIA.index, manifests: [] };
  if (!Array.isArray(index.manifests) || (index.mediaType !== undefined && index.mediaType !== MEDIA.index))
    throw unexpected(tag, registry, "a manifest that is not an OCI image index");
  const listed = new Set(index.manifests.map((d) => d.digest));
  const missing = add.filter((d) => !listed.has(d.digest) && listed.add(d.digest));
  if (missing.length === 0) return undefined;
  return canonicalJson({ ...index, manifests: [...index.manifests, ...missing] });
}

/** A layer descriptor as go-containerregistry writes it: mediaType, size, digest, annotations (keys sorted). */
const goLayer = (d: Descriptor) => {
  const annotations = d.annotations
    ? Object.fromEntries(Object.entries(d.annotations).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : undefined;
  return {
    mediaType: d.mediaType,
    size: d.size,
    digest: d.digest,
    ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
  };
};

/** What makes one signature: the payload's digest and the signature over it (two keys, two signatures). */
const signatureKey = (d: Descriptor): string =>
  `${d.digest} ${d.annotations?.[COSIGN_SIGNATURE_ANNOTATION] ?? ""}`;

/** go-containerregistry's zero time, which cosign's signature images carry (it records no creation time). */
const GO_ZERO_TIME = "0001-01-01T00:00:00Z";

/**
 * cosign's legacy signature manifest for a subject: the layers of the manifest already under
 * the .sig tag (`existing`, or undefined), then the signature layers of `add` it lacks. Undefined
 * when nothing is missing. The config is returned too: it must be pushed as a blob first.
 */
export function mergeCosignSignatures(
  existing: Uint8Array | undefined,
  add: readonly Descriptor[],
  tag: string,
  registry: string,
): { manifest: Uint8Array; config: Uint8Array } | undefined {
  const old = existing ? parse<Manifest>(existing, tag, registry) : undefined;
  if (old && !Array.isArray(old.layers)) throw unexpected(tag, registry, "a manifest without layers");
  const layers = [...(old?.layers ?? [])];
  const have = new Set(layers.map(signatureKey));
  const missing = add.filter((d) => !have.has(signatureKey(d)) && have.add(signatureKey(d)));
  if (missing.length === 0) return undefined;
  // layers already there are kept as the tag has them
  const all = [...layers, ...missing.map(goLayer)];
  const config = canonicalJson({
    architecture: "",
    created: GO_ZERO_TIME,
    history: all.map(() => ({ created: GO_ZERO_TIME })),
    os: "",
    rootfs: { type: "layers", diff_ids: all.map((l) => l.digest) },
    config: {},
  });
  const manifest = canonicalJson({
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config: { mediaType: MEDIA.config, size: config.length, digest: sha256Digest(config) },
    layers: all.map(goLayer),
  });
  return { manifest, config };
}

/**
 * OCI 1.1 artifacts that describe another manifest (its `subject`): the SBOMs, provenance and
 * signatures that travel with the image as referrers. One builder for all of them, so the archive,
 * the push and the verifier agree on their bytes. Pure.
 */
import { canonicalJson, type Descriptor, MEDIA, sha256Digest } from "./_oci.ts";

/** The artifact types aicr attaches, and the layer media type of each. */
export const ARTIFACT = {
  spdx: "application/spdx+json",
  intoto: "application/vnd.in-toto+json",
  /** cosign's signature artifact (its OCI 1.1 referrers form); layers are simple-signing payloads. */
  cosignSignature: "application/vnd.dev.cosign.artifact.sig.v1+json",
  simpleSigning: "application/vnd.dev.cosign.simplesigning.v1+json",
} as const;

/** The annotation that carries a cosign signature (base64 of the DER ECDSA signature) on its layer. */
export const COSIGN_SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature";
export const PREDICATE_TYPE_ANNOTATION = "in-toto.io/predicate-type";
export const TITLE_ANNOTATION = "org.opencontainers.image.title";

/** The OCI empty descriptor's blob: `{}`. */
export const EMPTY_BLOB = new TextEncoder().encode("{}");
export const EMPTY_CONFIG: Descriptor = {
  mediaType: "application/vnd.oci.empty.v1+json",
  digest: sha256Digest(EMPTY_BLOB),
  size: EMPTY_BLOB.length,
};

export interface ArtifactLayer {
  mediaType: string;
  data: Uint8Array;
  annotations?: Record<string, string>;
}

export interface ArtifactSpec {
  artifactType: string;
  /** The manifest described; only mediaType, digest and size are kept. */
  subject: Descriptor;
  layers: ArtifactLayer[];
  /** Default: the OCI empty config. */
  config?: { mediaType: string; data: Uint8Array };
  annotations?: Record<string, string>;
}

/** A built referrer: its manifest, the descriptor an index lists it by, and every blob it needs. */
export interface Artifact {
  manifest: Uint8Array;
  /** mediaType, digest, size, artifactType and the manifest's annotations (as the referrers API lists it). */
  descriptor: Descriptor & { artifactType: string };
  subject: Descriptor;
  /** Config and layer blobs, config first. */
  blobs: { digest: string; data: Uint8Array }[];
}

const sorted = (record: Record<string, string> | undefined): Record<string, string> | undefined =>
  record && Object.keys(record).length > 0
    ? Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : undefined;

/** The subject as a referrer names it: mediaType, digest and size, nothing else. */
export const subjectOf = (d: Descriptor): Descriptor => ({
  mediaType: d.mediaType,
  digest: d.digest,
  size: d.size,
});

/**
 * An image manifest with `artifactType` and `subject` (the OCI 1.1 way to attach an artifact):
 * JSON keys in a fixed order, annotations sorted, so the same inputs give the same digest.
 */
export function buildArtifact(spec: ArtifactSpec): Artifact {
  const configData = spec.config?.data ?? EMPTY_BLOB;
  const config: Descriptor = spec.config
    ? { mediaType: spec.config.mediaType, digest: sha256Digest(configData), size: configData.length }
    : EMPTY_CONFIG;
  const layers = spec.layers.map((l) => {
    const annotations = sorted(l.annotations);
    return {
      mediaType: l.mediaType,
      digest: sha256Digest(l.data),
      size: l.data.length,
      ...(annotations ? { annotations } : {}),
    };
  });
  const subject = subjectOf(spec.subject);
  const annotations = sorted(spec.annotations);
  const manifest = canonicalJson({
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    artifactType: spec.artifactType,
    config,
    layers,
    subject,
    ...(annotations ? { annotations } : {}),
  });
  const blobs = [
    { digest: config.digest, data: configData },
    ...spec.layers.map((l, i) => ({ digest: layers[i]!.digest, data: l.data })),
  ];
  return {
    manifest,
    descriptor: {
      mediaType: MEDIA.manifest,
      digest: sha256Digest(manifest),
      size: manifest.length,
      artifactType: spec.artifactType,
      ...(annotations ? { annotations } : {}),
    },
    subject,
    blobs,
  };
}

/** The tag the OCI referrers tag scheme keeps an index of `digest`'s referrers under: `sha256-<hex>`. */
export function referrersTag(digest: string): string {
  return digest.replace(":", "-");
}

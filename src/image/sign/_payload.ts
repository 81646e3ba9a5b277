/**
 * cosign's simple-signing payload: the JSON a container image signature covers. Its bytes are what
 * cosign writes (sigstore's payload.Cosign marshalled by Go's encoding/json): no whitespace, keys in
 * the struct's order, `"optional":null` when there are no annotations, no trailing newline. The
 * signature is over these exact bytes, so they are built here once and never re-serialised. Pure.
 */
import { isDigest } from "../_oci.ts";

/** `critical.type` of every cosign container image signature. */
export const COSIGN_SIGNATURE_TYPE = "cosign container image signature";

/** What a payload claims: the repository it names and the manifest digest it signs. */
export interface SimpleSigningClaim {
  /** `critical.identity.docker-reference`: the repository (e.g. ghcr.io/aicr-project/aicr). */
  dockerReference: string;
  /** `critical.image.docker-manifest-digest`: `sha256:<hex>` of the signed manifest. */
  digest: string;
}

export type PayloadReading = { ok: true; claim: SimpleSigningClaim } | { ok: false; reason: string };

/**
 * A repository as an image reference names it, without tag or digest: lowercase path components
 * (a-z, 0-9 and the separators . _ -), an optional registry host with a port. None of the characters
 * Go's encoder escapes (< > & U+2028 U+2029) can appear, so JSON.stringify gives Go's bytes.
 */
const REPOSITORY =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::[0-9]+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;

export function isRepository(value: string): boolean {
  return value.length <= 255 && REPOSITORY.test(value);
}

/**
 * The payload cosign signs for `digest` in `repository`:
 * {"critical":{"identity":{"docker-reference":R},"image":{"docker-manifest-digest":D},"type":T},"optional":null}
 */
export function buildPayload(repository: string, digest: string): Uint8Array {
  if (!isRepository(repository)) throw new Error(`not a repository name: ${JSON.stringify(repository)}`);
  if (!isDigest(digest)) throw new Error(`not a sha256 digest: ${JSON.stringify(digest)}`);
  const text = JSON.stringify({
    critical: {
      identity: { "docker-reference": repository },
      image: { "docker-manifest-digest": digest },
      type: COSIGN_SIGNATURE_TYPE,
    },
    optional: null,
  });
  return new TextEncoder().encode(text);
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A payload read strictly: a JSON object whose `critical` names the cosign type, a string
 * docker-reference and a `sha256:<64 hex>` digest; `optional` is null or an object. Anything else is
 * a reason (naming the field, never the signature), for the verifier to report.
 */
export function parsePayload(bytes: Uint8Array): PayloadReading {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, reason: "the payload is not UTF-8" };
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { ok: false, reason: "the payload is not JSON" };
  }
  if (!isObject(doc)) return { ok: false, reason: "the payload is not a JSON object" };
  const critical = doc.critical;
  if (!isObject(critical)) return { ok: false, reason: "the payload has no critical object" };
  if (critical.type !== COSIGN_SIGNATURE_TYPE)
    return {
      ok: false,
      reason: `critical.type is ${JSON.stringify(critical.type ?? null)}, not ${JSON.stringify(COSIGN_SIGNATURE_TYPE)}`,
    };
  const identity = critical.identity;
  const reference = isObject(identity) ? identity["docker-reference"] : undefined;
  if (typeof reference !== "string")
    return { ok: false, reason: "critical.identity.docker-reference is not a string" };
  const image = critical.image;
  const digest = isObject(image) ? image["docker-manifest-digest"] : undefined;
  if (typeof digest !== "string" || !isDigest(digest))
    return {
      ok: false,
      reason: `critical.image.docker-manifest-digest is ${typeof digest === "string" ? JSON.stringify(digest.slice(0, 80)) : "missing"}, not sha256:<64 lowercase hex>`,
    };
  if (doc.optional !== undefined && doc.optional !== null && !isObject(doc.optional))
    return { ok: false, reason: "optional is neither null nor an object" };
  return { ok: true, claim: { dockerReference: reference, digest } };
}

/**
 * The docker-reference cosign writes for an image name (`registry/repo:tag`, `repo@sha256:…`): the
 * repository without tag or digest, normalised as go-containerregistry's name package does (no
 * registry → index.docker.io, a one-part Docker Hub name → library/<name>, docker.io →
 * index.docker.io). Undefined when the name is not an image reference.
 */
export function repositoryOf(imageName: string): string | undefined {
  let name = imageName.trim();
  const at = name.indexOf("@");
  if (at >= 0) name = name.slice(0, at);
  const slash = name.lastIndexOf("/");
  const colon = name.lastIndexOf(":");
  if (colon > slash) name = name.slice(0, colon);
  const parts = name.split("/");
  const first = parts[0] ?? "";
  const hasRegistry =
    parts.length > 1 && (first.includes(".") || first.includes(":") || first === "localhost");
  let repository: string;
  if (!hasRegistry) repository = `index.docker.io/${parts.length === 1 ? `library/${name}` : name}`;
  else if (first === "docker.io")
    repository = `index.docker.io/${parts.length === 2 ? `library/${parts[1]}` : parts.slice(1).join("/")}`;
  else repository = name;
  return isRepository(repository) ? repository : undefined;
}

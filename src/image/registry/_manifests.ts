/**
 * Manifests and indexes, byte for byte as the archive holds them (their digest is their name):
 * HEAD by digest, PUT by digest or tag, GET by digest or tag (at most 4 MiB, the bytes hashed), the
 * registry's Docker-Content-Digest checked.
 */
import { isDigest, sha256Digest } from "../_oci.ts";
import type { RegistryClient } from "./_client.ts";
import { httpError, protocolError } from "./_errors.ts";
import { drain } from "./_http.ts";

export interface ManifestTarget {
  client: RegistryClient;
  registry: string;
  repository: string;
}

export interface ManifestBlob {
  digest: string;
  mediaType: string;
  bytes: Uint8Array;
}

export async function manifestExists(t: ManifestTarget, m: ManifestBlob): Promise<boolean> {
  const res = await t.client.send(`/v2/${t.repository}/manifests/${m.digest}`, {
    method: "HEAD",
    headers: { accept: m.mediaType },
  });
  await drain(res);
  if (res.ok) return true;
  if (res.status === 404) return false;
  throw await httpError(res, `Checking manifest ${m.digest}`, t.registry);
}

/**
 * PUT under `ref` (the digest itself, or a tag); the registry must name it by our digest. Returns
 * the OCI-Subject header (a registry with the referrers API sets it when the manifest has a subject).
 */
export async function putManifest(
  t: ManifestTarget,
  m: ManifestBlob,
  ref: string,
): Promise<{ subject: string | undefined }> {
  const res = await t.client.send(`/v2/${t.repository}/manifests/${ref}`, {
    method: "PUT",
    headers: { "content-type": m.mediaType, "content-length": String(m.bytes.length) },
    body: m.bytes,
  });
  const doing = `Putting manifest ${ref === m.digest ? m.digest : `${m.digest} as tag ${ref}`}`;
  if (res.status !== 201 && res.status !== 200 && res.status !== 204) {
    throw res.ok
      ? protocolError(doing, t.registry, `HTTP ${res.status}`)
      : await httpError(res, doing, t.registry);
  }
  await drain(res);
  const stored = res.headers.get("docker-content-digest");
  if (stored && stored !== m.digest)
    throw protocolError(doing, t.registry, `it stored the manifest as ${stored}`);
  return { subject: res.headers.get("oci-subject") ?? undefined };
}

/** The OCI distribution spec's bound on a manifest (distribution refuses larger ones). */
export const MANIFEST_LIMIT = 4 * 1024 * 1024;

/** A response body of at most `limit` bytes; more is a protocol error (INTERNAL) naming what was read. */
export async function readBounded(
  res: Response,
  limit: number,
  doing: string,
  registry: string,
): Promise<Uint8Array> {
  const tooBig = () => protocolError(doing, registry, `the answer is larger than ${limit} bytes`);
  if (Number(res.headers.get("content-length") ?? 0) > limit) {
    await res.body?.cancel().catch(() => undefined);
    throw tooBig();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (res.body) {
    for await (const chunk of res.body) {
      size += chunk.length;
      if (size > limit) {
        await res.body.cancel().catch(() => undefined);
        throw tooBig();
      }
      chunks.push(chunk);
    }
  }
  return new Uint8Array(Buffer.concat(chunks, size));
}

/** The Content-Type without parameters; when absent or generic, the body's own mediaType field. */
function mediaTypeOf(header: string | null, bytes: Uint8Array): string {
  const type = header?.split(";")[0]?.trim() ?? "";
  if (type && type !== "application/json" && type !== "application/octet-stream") return type;
  try {
    const m = (JSON.parse(new TextDecoder().decode(bytes)) as { mediaType?: unknown }).mediaType;
    return typeof m === "string" ? m : type;
  } catch {
    return type;
  }
}

/**
 * GET a manifest or index by digest or tag, asking for the media types in `accept`; undefined when
 * the registry has none (404). At most MANIFEST_LIMIT bytes. By digest, the bytes must hash to it;
 * by tag, to the Docker-Content-Digest the registry names (when it names one): else INTERNAL.
 */
export async function getManifest(
  t: ManifestTarget,
  ref: string,
  accept: readonly string[],
): Promise<ManifestBlob | undefined> {
  const res = await t.client.send(`/v2/${t.repository}/manifests/${ref}`, {
    method: "GET",
    headers: { accept: accept.join(", ") },
  });
  const doing = `Reading manifest ${ref}`;
  if (res.status === 404) {
    await drain(res);
    return undefined;
  }
  if (res.status !== 200) {
    if (res.ok) await drain(res);
    throw res.ok
      ? protocolError(doing, t.registry, `HTTP ${res.status}`)
      : await httpError(res, doing, t.registry);
  }
  const bytes = await readBounded(res, MANIFEST_LIMIT, doing, t.registry);
  const digest = sha256Digest(bytes);
  const named = isDigest(ref) ? ref : res.headers.get("docker-content-digest");
  if (named && named !== digest)
    throw protocolError(doing, t.registry, `its bytes have digest ${digest}, not ${named}`);
  return { digest, mediaType: mediaTypeOf(res.headers.get("content-type"), bytes), bytes };
}

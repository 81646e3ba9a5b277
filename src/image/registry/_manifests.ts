/**
 * Manifests and indexes, byte for byte as the archive holds them (their digest is their name):
 * HEAD by digest, PUT by digest or tag, the registry's Docker-Content-Digest checked. (Reads:
 * _pull.ts getManifest.)
 */
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

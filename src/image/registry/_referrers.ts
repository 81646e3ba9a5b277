/**
 * Reading a manifest's referrers from a registry: the referrers API (GET /v2/<repo>/referrers/<digest>)
 * where the registry has it, else the OCI referrers tag scheme (the index under `sha256-<hex>`).
 */
import { type Descriptor, type Index, MEDIA } from "../_oci.ts";
import { referrersTag } from "../_referrers.ts";
import type { RegistryClient } from "./_client.ts";
import { httpError, protocolError } from "./_errors.ts";
import { drain } from "./_http.ts";
import type { ManifestTarget } from "./_manifests.ts";
import { getManifest, MAX_MANIFEST_BYTES, readBounded } from "./_pull.ts";

export interface ReferrersList {
  /** Where the list came from: the referrers API, or the tag scheme (also when neither has any). */
  via: "api" | "tag-scheme";
  /** As the registry lists them (mediaType, digest, size, artifactType, annotations). */
  manifests: Descriptor[];
}

function indexOf(bytes: Uint8Array, doing: string, registry: string): Index {
  try {
    const index = JSON.parse(new TextDecoder().decode(bytes)) as Index;
    if (Array.isArray(index?.manifests)) return index;
  } catch {
    // reported below
  }
  throw protocolError(doing, registry, "the answer is not an OCI image index");
}

/**
 * The referrers API's answer for `digest`, or undefined when the registry has no such API (it
 * answers 404, or 400/405 as a route it does not know). A 5xx is an error (retryable).
 */
async function fromApi(t: ManifestTarget, digest: string): Promise<Descriptor[] | undefined> {
  const res = await t.client.send(`/v2/${t.repository}/referrers/${digest}`, {
    method: "GET",
    headers: { accept: MEDIA.index },
  });
  const doing = `Listing the referrers of ${digest}`;
  if (res.status === 404 || res.status === 400 || res.status === 405) {
    await drain(res);
    return undefined;
  }
  if (res.status !== 200)
    throw res.ok
      ? protocolError(doing, t.registry, `HTTP ${res.status}`)
      : await httpError(res, doing, t.registry);
  const type = res.headers.get("content-type") ?? "";
  if (!type.startsWith(MEDIA.index)) {
    // a registry without the API that answers every path with a page of its own
    await drain(res);
    return undefined;
  }
  const bytes = await readBounded(res, MAX_MANIFEST_BYTES, `the referrers of ${digest}`);
  return indexOf(bytes, doing, t.registry).manifests;
}

/** Whether the registry has the referrers API (it lists the referrers of `digest`). */
export async function hasReferrersApi(t: ManifestTarget, digest: string): Promise<boolean> {
  return (await fromApi(t, digest)) !== undefined;
}

/** The referrers of `digest` in `repository`: through the API, else the tag scheme; none is an empty list. */
export async function listReferrers(
  client: RegistryClient,
  repository: string,
  digest: string,
  registry = client.base.host,
): Promise<ReferrersList> {
  const t: ManifestTarget = { client, registry, repository };
  const api = await fromApi(t, digest);
  if (api) return { via: "api", manifests: api };
  const tag = referrersTag(digest);
  const index = await getManifest(t, tag);
  if (!index) return { via: "tag-scheme", manifests: [] };
  return {
    via: "tag-scheme",
    manifests: indexOf(index.bytes, `Reading the referrers tag ${tag}`, registry).manifests,
  };
}

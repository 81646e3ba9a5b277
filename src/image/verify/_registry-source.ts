/**
 * A registry image as a verify source: the root by tag or digest, every manifest by digest, every
 * blob streamed and hashed (layers are not kept), referrers through the referrers API or the tag
 * scheme (_referrers.ts listReferrers), cosign's legacy `.sig` tag. Each read is retried like a
 * push step (5xx, 429, a dropped connection). A root the registry does not have is NOT_FOUND.
 */
import { AicrError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import type { Descriptor } from "../_oci.ts";
import type { RegistryClient } from "../registry/_client.ts";
import { ContentError, fetchBlob, getManifest, type PullTarget } from "../registry/_pull.ts";
import type { ImageReference } from "../registry/_reference.ts";
import { cosignSignatureTag } from "../registry/_referrer-tags.ts";
import { listReferrers } from "../registry/_referrers.ts";
import { DEFAULT_RETRY, type RetryPolicy, withRetries } from "../registry/_retry.ts";
import { MAX_DOCUMENT_BYTES, type VerifySource } from "./_source.ts";

export interface RegistrySourceOptions {
  client: RegistryClient;
  ref: ImageReference;
  retry?: RetryPolicy | undefined;
  signal: AbortSignal;
  log: Logger;
}

/** `registry/repository:tag` or `…@digest`, as the operator wrote it (for messages). */
export const referenceText = (ref: ImageReference): string =>
  `${ref.registry}/${ref.repository}${ref.digest ? `@${ref.digest}` : `:${ref.tag}`}`;

export function registrySource(o: RegistrySourceOptions): VerifySource {
  const { ref, signal, log } = o;
  const t: PullTarget = { client: o.client, registry: ref.registry, repository: ref.repository };
  const retry = o.retry ?? DEFAULT_RETRY;
  const step = <T>(what: string, fn: () => Promise<T>) => withRetries(what, retry, signal, log, fn);
  /** Manifests read so far, by digest (the root is read once, then looked up). */
  const manifests = new Map<string, Uint8Array>();
  /** Each digest's referrers are listed once (its signature, SBOM and provenance checks all ask). */
  const referrers = new Map<string, Promise<Descriptor[]>>();

  const manifest = async (d: Descriptor, what: string): Promise<Uint8Array> => {
    const hit = manifests.get(d.digest);
    if (hit) return hit;
    const got = await step(`Reading ${what} ${d.digest}`, () => getManifest(t, d.digest));
    if (!got) throw new ContentError(`${what} ${d.digest} is missing from ${ref.registry}/${ref.repository}`);
    manifests.set(got.digest, got.bytes);
    return got.bytes;
  };

  const blob = async (d: Descriptor, what: string, keep: boolean): Promise<Uint8Array | undefined> => {
    const got = await step(`Reading ${what} ${d.digest}`, () =>
      fetchBlob(t, d, what, { keep, maxKeep: MAX_DOCUMENT_BYTES }),
    );
    if (!got) throw new ContentError(`${what} ${d.digest} is missing from ${ref.registry}/${ref.repository}`);
    return got.bytes;
  };

  return {
    async root() {
      const name = ref.digest ?? ref.tag ?? "";
      const got = await step(`Reading ${referenceText(ref)}`, () => getManifest(t, name));
      if (!got) {
        throw new AicrError("NOT_FOUND", `${referenceText(ref)} is not in the registry`, {
          remedy: `check the repository and ${ref.digest ? "digest" : "tag"} (aicr image push prints the reference it pushed)`,
          context: { registry: ref.registry, repository: ref.repository, reference: name },
        });
      }
      manifests.set(got.digest, got.bytes);
      return { mediaType: got.mediaType, digest: got.digest, size: got.bytes.length };
    },
    manifest,
    blob: async (d, what) => (await blob(d, what, true)) ?? new Uint8Array(),
    async contents(config, layers) {
      await blob(config, "config", false);
      for (const l of layers) await blob(l, "layer", false);
    },
    referrers(digest) {
      let listed = referrers.get(digest);
      if (!listed) {
        listed = step(`Listing the referrers of ${digest}`, () =>
          listReferrers(o.client, ref.repository, digest, ref.registry),
        ).then((l) => l.manifests);
        referrers.set(digest, listed);
      }
      return listed;
    },
    async legacySignatures(digest) {
      const tag = cosignSignatureTag(digest);
      const got = await step(`Reading tag ${tag}`, () => getManifest(t, tag));
      return got?.bytes;
    },
  };
}

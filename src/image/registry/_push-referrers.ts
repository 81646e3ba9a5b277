/**
 * The referrers of a push (SBOMs, provenance, signatures), after the image: each manifest by digest
 * (skipped when present). A registry with the referrers API (its PUT answers with OCI-Subject, or
 * its referrers endpoint answers) indexes them itself; for one without, the OCI referrers tag
 * scheme: the index under `sha256-<hex>` of each subject gains the referrers it lacks. Signatures
 * also go under cosign's legacy `sha256-<hex>.sig` tag, which `cosign verify --key` and Kyverno
 * read, merged with the signatures already there. Nothing already in place is written again.
 */
import type { Logger } from "../../core/log.ts";
import { type Descriptor, MEDIA, sha256Digest } from "../_oci.ts";
import { referrersTag } from "../_referrers.ts";
import { type BlobTarget, ensureBlob } from "./_blobs.ts";
import { type ManifestTarget, manifestExists, putManifest } from "./_manifests.ts";
import type { PlannedReferrer } from "./_plan.ts";
import { getManifest } from "./_pull.ts";
import { cosignSignatureTag, mergeCosignSignatures, mergeReferrersIndex } from "./_referrer-tags.ts";
import { hasReferrersApi } from "./_referrers.ts";

export interface ReferrersTally {
  /** Referrers in the push. */
  count: number;
  put: number;
  skipped: number;
  /** How the registry lists them; undefined when there were none. */
  via: "api" | "tag-scheme" | undefined;
  /** Tags written: referrers tag-scheme indexes and cosign .sig manifests. */
  tags: { referrers: number; signatures: number };
}

export interface ReferrersPush {
  mt: ManifestTarget;
  blobs: BlobTarget;
  referrers: readonly PlannedReferrer[];
  step: <T>(what: string, fn: () => Promise<T>) => Promise<T>;
  log: Logger;
}

/** Values of `items` grouped by key, keys in the order first seen. */
function groupBy<T, V>(items: readonly T[], key: (t: T) => string, values: (t: T) => V[]): Map<string, V[]> {
  const out = new Map<string, V[]>();
  for (const item of items) {
    const k = key(item);
    out.set(k, [...(out.get(k) ?? []), ...values(item)]);
  }
  return out;
}

export async function pushReferrers(o: ReferrersPush): Promise<ReferrersTally> {
  const { mt, step, log, referrers } = o;
  const tally: ReferrersTally = {
    count: referrers.length,
    put: 0,
    skipped: 0,
    via: undefined,
    tags: { referrers: 0, signatures: 0 },
  };
  if (referrers.length === 0) return tally;
  let api = false;
  for (const r of referrers) {
    await step(`Referrer ${r.manifest.digest}`, async () => {
      if (await manifestExists(mt, r.manifest)) {
        tally.skipped++;
        return;
      }
      const { subject } = await putManifest(mt, r.manifest, r.manifest.digest);
      if (subject) api = true;
      tally.put++;
      log.debug("referrer put", { digest: r.manifest.digest, artifactType: r.descriptor.artifactType });
    });
  }
  // a registry may have the API without saying so on the PUT (or every PUT was skipped): ask it
  api ||= await step("Checking for the referrers API", () => hasReferrersApi(mt, referrers[0]!.subject));
  tally.via = api ? "api" : "tag-scheme";

  if (!api) {
    const bySubject = groupBy(
      referrers,
      (r) => r.subject,
      (r) => [r.descriptor],
    );
    for (const [subject, descriptors] of bySubject) {
      const tag = referrersTag(subject);
      await step(`Referrers tag ${tag}`, async () => {
        const existing = await getManifest(mt, tag);
        const merged = mergeReferrersIndex(existing?.bytes, descriptors, tag, mt.registry);
        if (!merged) return;
        await putManifest(mt, { digest: sha256Digest(merged), mediaType: MEDIA.index, bytes: merged }, tag);
        tally.tags.referrers++;
        log.debug("referrers tag written", { tag, referrers: descriptors.length });
      });
    }
  }

  const signatures = groupBy<PlannedReferrer, Descriptor>(
    referrers.filter((r) => r.signatures.length > 0),
    (r) => r.subject,
    (r) => r.signatures,
  );
  for (const [subject, layers] of signatures) {
    const tag = cosignSignatureTag(subject);
    await step(`Signature tag ${tag}`, async () => {
      const existing = await getManifest(mt, tag);
      const merged = mergeCosignSignatures(existing?.bytes, layers, tag, mt.registry);
      if (!merged) return;
      await ensureBlob(o.blobs, sha256Digest(merged.config), merged.config);
      const manifest = {
        digest: sha256Digest(merged.manifest),
        mediaType: MEDIA.manifest,
        bytes: merged.manifest,
      };
      await putManifest(mt, manifest, tag);
      tally.tags.signatures++;
      log.debug("cosign signature tag written", { tag, signatures: layers.length });
    });
  }
  return tally;
}

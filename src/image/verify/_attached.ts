/**
 * An SBOM or a provenance statement attached to a platform manifest: among the referrers of that
 * digest with the artifact type, one whose manifest names it as subject, is signed by the key, and
 * whose document says it is about that digest (_documents.ts). When none is, the failure that got
 * furthest is the reason: not signed < unreadable < about something else.
 */
import { ARTIFACT } from "../_referrers.ts";
import { provenanceProblem, sbomProblem } from "./_documents.ts";
import type { SignatureVerdict } from "./_signatures.ts";
import { content, parseManifest, type VerifySource } from "./_source.ts";

export type AttachedKind = "sbom" | "provenance";

const SPEC = {
  sbom: { artifactType: ARTIFACT.spdx, noun: "SBOM", problem: sbomProblem },
  provenance: { artifactType: ARTIFACT.intoto, noun: "provenance", problem: provenanceProblem },
} as const;

export interface AttachedVerdict {
  ok: boolean;
  /** The referrer that passed, or the one the reason is about. */
  referrer?: string;
  reason?: string;
}

export async function checkAttached(
  source: VerifySource,
  subject: string,
  which: AttachedKind,
  signed: (digest: string) => Promise<SignatureVerdict>,
): Promise<AttachedVerdict> {
  const spec = SPEC[which];
  const what = `${spec.noun} manifest`;
  let best: { rank: number; referrer: string; reason: string } | undefined;
  const fail = (rank: number, referrer: string, reason: string): void => {
    if (!best || rank > best.rank) best = { rank, referrer, reason };
  };
  const listed = (await source.referrers(subject)).filter(
    (d) => d.artifactType === undefined || d.artifactType === spec.artifactType,
  );
  for (const d of listed) {
    const read = await content(async () => parseManifest(await source.manifest(d, what), d.digest, what));
    if ("reason" in read) {
      fail(1, d.digest, read.reason);
      continue;
    }
    const m = read.value;
    if (m.artifactType !== spec.artifactType || m.subject?.digest !== subject) continue;
    const verdict = await signed(d.digest);
    if (!verdict.ok) {
      fail(
        0,
        d.digest,
        `the ${spec.noun} attached to ${subject} is not signed by this key: ${verdict.reason}`,
      );
      continue;
    }
    const layer = m.layers.find((l) => l.mediaType === spec.artifactType);
    if (!layer) {
      fail(
        1,
        d.digest,
        `the ${spec.noun} ${d.digest} attached to ${subject} has no ${spec.artifactType} layer`,
      );
      continue;
    }
    const doc = await content(() => source.blob(layer, spec.noun));
    if ("reason" in doc) {
      fail(1, d.digest, doc.reason);
      continue;
    }
    const problem = spec.problem(doc.value, subject);
    if (!problem) return { ok: true, referrer: d.digest };
    fail(2, d.digest, `the ${spec.noun} ${d.digest} attached to ${subject} ${problem}`);
  }
  return best
    ? { ok: false, referrer: best.referrer, reason: best.reason }
    : { ok: false, reason: `no ${spec.noun} is attached to ${subject}` };
}

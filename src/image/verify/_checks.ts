/**
 * The checks of one image, over a verify source: from the root down, the index's signature, then for
 * each platform manifest its config and layers (every digest and size), its signature, and an SBOM
 * and a provenance statement attached to it (subject = its digest), each signed by the key and
 * naming that digest. Every check is recorded, passed or not; nothing stops at the first failure.
 */
import { type Descriptor, isIndexMedia, isManifestMedia, type Platform } from "../_oci.ts";
import type { VerificationKey } from "../sign/_keys.ts";
import { type AttachedKind, checkAttached } from "./_attached.ts";
import { checkSignature, type SignatureVerdict } from "./_signatures.ts";
import { content, parseIndex, parseJson, parseManifest, type VerifySource } from "./_source.ts";
import type { CheckName, CheckResult } from "./report.ts";

/** Index nesting deeper than this is not followed (as readOciArchive). */
const MAX_DEPTH = 4;

export const platformText = (p: Platform | undefined): string | undefined =>
  p?.os && p.architecture ? [p.os, p.architecture, p.variant].filter(Boolean).join("/") : undefined;

export async function runChecks(
  source: VerifySource,
  key: VerificationKey,
): Promise<{ digest: string; checks: CheckResult[] }> {
  const checks: CheckResult[] = [];
  const signatures = new Map<string, Promise<SignatureVerdict>>();
  const signed = (digest: string): Promise<SignatureVerdict> => {
    let verdict = signatures.get(digest);
    if (!verdict) {
      verdict = checkSignature(source, key, digest);
      signatures.set(digest, verdict);
    }
    return verdict;
  };

  type Subject = Pick<CheckResult, "subject" | "kind" | "platform">;
  const record = (s: Subject, check: CheckName, ok: boolean, extra: Partial<CheckResult> = {}): void => {
    checks.push({ ...s, check, ok, ...extra });
  };
  const signature = async (s: Subject): Promise<void> => {
    const v = await signed(s.subject);
    record(s, "signature", v.ok, v.ok ? { referrer: v.by } : { reason: v.reason });
  };

  const attached = async (s: Subject, which: AttachedKind): Promise<void> => {
    const verdict = await checkAttached(source, s.subject, which, signed);
    record(s, which, verdict.ok, {
      ...(verdict.referrer ? { referrer: verdict.referrer } : {}),
      ...(verdict.reason ? { reason: verdict.reason } : {}),
    });
  };

  /** A platform manifest's os/architecture from its config, when no index names it. */
  const configPlatform = async (config: Descriptor): Promise<string | undefined> => {
    const read = await content(async () =>
      parseJson<Platform>(await source.blob(config, "config"), "config", config.digest),
    );
    return "value" in read ? platformText(read.value) : undefined;
  };

  const visitManifest = async (d: Descriptor, platform: string | undefined): Promise<void> => {
    const s: Subject = { subject: d.digest, kind: "manifest", ...(platform ? { platform } : {}) };
    const m = await content(async () => parseManifest(await source.manifest(d, "manifest"), d.digest));
    if ("reason" in m) record(s, "blobs", false, { reason: m.reason });
    else {
      if (!platform) {
        const p = await configPlatform(m.value.config);
        if (p) s.platform = p;
      }
      const blobs = await content(() => source.contents(m.value.config, m.value.layers ?? []));
      record(s, "blobs", !("reason" in blobs), "reason" in blobs ? { reason: blobs.reason } : {});
    }
    await signature(s);
    await attached(s, "sbom");
    await attached(s, "provenance");
  };

  const visit = async (d: Descriptor, platform: string | undefined, depth: number): Promise<void> => {
    if (isManifestMedia(d.mediaType)) return visitManifest(d, platform);
    const s: Subject = { subject: d.digest, kind: "index" };
    if (!isIndexMedia(d.mediaType) || depth > MAX_DEPTH) {
      record(s, "blobs", false, {
        reason: isIndexMedia(d.mediaType)
          ? `index ${d.digest} is nested deeper than ${MAX_DEPTH}`
          : `${d.digest} has media type ${JSON.stringify(d.mediaType)}, neither an image index nor a manifest`,
      });
      return;
    }
    await signature(s);
    const index = await content(async () => parseIndex(await source.manifest(d, "index"), d.digest));
    if ("reason" in index) {
      record(s, "blobs", false, { reason: index.reason });
      return;
    }
    for (const child of index.value.manifests ?? [])
      await visit(child, platformText(child.platform), depth + 1);
  };

  const root = await source.root();
  await visit(root, platformText(root.platform), 0);
  return { digest: root.digest, checks };
}

/**
 * What `aicr image verify` found: one entry per check, the whole as JSON (-o json) or one line per
 * check and a summary (text), and the error a failed verification ends with (UNAUTHORIZED, exit 4:
 * the first reason in its message). Pure.
 */
import { AicrError } from "../../core/errors.ts";

export type CheckName = "signature" | "sbom" | "provenance" | "blobs";

export interface CheckResult {
  /** The digest checked: the index or a platform manifest. */
  subject: string;
  kind: "index" | "manifest";
  /** A platform manifest's `os/architecture[/variant]`. */
  platform?: string;
  check: CheckName;
  ok: boolean;
  /** Why it failed, naming the digest and what was wrong. */
  reason?: string;
  /** The referrer that passed (or the one the reason is about): a signature, SBOM or provenance manifest. */
  referrer?: string;
}

export interface VerifyReport {
  /** The image as the operator named it: an archive's path or a registry reference. */
  reference: string;
  /** The digest of what was verified (the index, or the one manifest). */
  digest: string;
  key: { fingerprint: string };
  ok: boolean;
  checks: CheckResult[];
}

export function report(
  reference: string,
  digest: string,
  fingerprint: string,
  checks: CheckResult[],
): VerifyReport {
  return { reference, digest, key: { fingerprint }, ok: checks.every((c) => c.ok), checks };
}

const WHAT: Record<CheckName, (c: CheckResult, key: string) => string> = {
  blobs: () => "config and layers match their digests and sizes",
  signature: (_c, key) => `signed by key ${key}`,
  sbom: (c, key) => `SBOM ${c.referrer} names this manifest, signed by key ${key}`,
  provenance: (c, key) => `provenance ${c.referrer} has this manifest as its subject, signed by key ${key}`,
};

/** One line per check — status, kind, platform, digest, check, what passed or why not — then the summary. */
export function renderText(r: VerifyReport): string {
  const rows = r.checks.map((c) => [
    c.ok ? "OK" : "FAIL",
    c.kind,
    c.platform ?? "-",
    c.subject,
    c.check,
    c.ok ? WHAT[c.check](c, r.key.fingerprint) : (c.reason ?? "failed"),
  ]);
  const widths = [0, 1, 2, 3, 4].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) =>
    row
      .map((cell, i) => (i < widths.length ? cell.padEnd(widths[i]!) : cell))
      .join("  ")
      .trimEnd(),
  );
  const failed = r.checks.filter((c) => !c.ok).length;
  lines.push(
    r.ok
      ? `Verified ${r.reference} (${r.digest}) with key ${r.key.fingerprint}: all ${r.checks.length} checks passed`
      : `NOT verified: ${r.reference} (${r.digest}) with key ${r.key.fingerprint}: ${failed} of ${r.checks.length} checks failed`,
  );
  return `${lines.join("\n")}\n`;
}

/** The error a failed verification ends with: UNAUTHORIZED (exit 4), naming the first failure. */
export function verificationFailed(r: VerifyReport): AicrError {
  const failed = r.checks.filter((c) => !c.ok);
  const first = failed[0]?.reason ?? "a check failed";
  const more = failed.length > 1 ? ` (and ${failed.length - 1} more failed checks)` : "";
  return new AicrError("UNAUTHORIZED", `${r.reference} did not verify: ${first}${more}`, {
    remedy:
      "do not use this image. A missing signature, SBOM or provenance: it was not signed with this key (aicr image sign), or was pushed without its referrers (push the signed archive again); a digest that does not match: the content was altered",
    context: { reference: r.reference, digest: r.digest, key: r.key.fingerprint, failed: failed.length },
  });
}

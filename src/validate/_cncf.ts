/**
 * `--cncf-submission <dir>`: the CNCF Kubernetes AI Conformance evidence, one Markdown file per
 * requirement, from the conformance phase's results. Skipped tests and the diagnostics
 * (gpu-operator-health, platform-health) are left out, as the original's renderer leaves them out;
 * a requirement with no test left has no file. Pure.
 */
import type { NewFile } from "../core/files.ts";
import { findValidator } from "./_catalog.ts";
import type { CheckResult } from "./_report.ts";

export interface SubmissionInput {
  version: string;
  runId: string;
  /** Epoch milliseconds. */
  start: number;
  stop: number;
  results: readonly CheckResult[];
}

const fence = (lines: readonly string[]): string => {
  // A fence longer than any run of backticks inside: the evidence cannot close it early.
  const longest = Math.max(
    2,
    ...lines.map((l) => Math.max(0, ...(l.match(/`+/g) ?? []).map((m) => m.length))),
  );
  const f = "`".repeat(longest + 1);
  return `${f}text\n${lines.join("\n")}\n${f}`;
};

export function buildCncfSubmission(input: SubmissionInput): NewFile[] {
  const byFile = new Map<string, { requirement: string; tests: CheckResult[] }>();
  for (const r of input.results) {
    const cncf = findValidator(r.name)?.cncf;
    if (!cncf || r.status === "skipped" || r.suite !== "conformance") continue;
    const entry = byFile.get(cncf.file) ?? { requirement: cncf.requirement, tests: [] };
    entry.tests.push(r);
    byFile.set(cncf.file, entry);
  }
  return [...byFile.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([file, { requirement, tests }]) => ({
      file,
      content: [
        `# ${requirement}`,
        "",
        `Evidence for the CNCF Kubernetes AI Conformance requirement \`${requirement}\`, collected by aicr ${input.version} (run ${input.runId}, ${new Date(input.start).toISOString()} to ${new Date(input.stop).toISOString()}).`,
        "",
        "| Test | Result | Duration |",
        "| --- | --- | --- |",
        ...tests.map((t) => `| ${t.name} | ${t.status} | ${(t.durationMs / 1000).toFixed(1)} s |`),
        ...tests.flatMap((t) => [
          "",
          `## ${t.name}`,
          "",
          `**Result:** ${t.status}${t.message ? ` — ${t.message.split("\n")[0]}` : ""}`,
          "",
          fence(t.stdout),
        ]),
        "",
      ].join("\n"),
    }));
}

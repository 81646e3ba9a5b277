import { expect, test } from "bun:test";
import { buildCncfSubmission } from "../../../src/validate/_cncf.ts";
import type { CheckResult } from "../../../src/validate/_report.ts";

const row = (name: string, status: CheckResult["status"], stdout: string[] = []): CheckResult => ({
  suite: "conformance",
  name,
  status,
  durationMs: 1500,
  message: `${name} ${status}`,
  stdout,
});

test("one file per requirement; skipped tests and the diagnostics left out; the two metrics checks share a file", () => {
  const files = buildCncfSubmission({
    version: "0.1.0",
    runId: "20261202-120000-0123456789abcdef",
    start: Date.UTC(2026, 11, 2, 12),
    stop: Date.UTC(2026, 11, 2, 12, 5),
    results: [
      row("platform-health", "passed"),
      row("gpu-operator-health", "failed"),
      row("dra-support", "passed", ["--- DRA API resources ---", "resourceslices"]),
      row("gang-scheduling", "skipped"),
      row("accelerator-metrics", "passed"),
      row("ai-service-metrics", "failed"),
      row("robust-controller", "passed", ["```", "x"]),
      { ...row("check-nvidia-smi", "passed"), suite: "deployment" },
    ],
  });
  expect(files.map((f) => f.file)).toEqual([
    "accelerator-metrics.md",
    "dra-support.md",
    "robust-operator.md",
  ]);
  const metrics = files[0]?.content ?? "";
  expect(metrics).toContain("# accelerator_metrics");
  expect(metrics).toContain("| accelerator-metrics | passed | 1.5 s |");
  expect(metrics).toContain("| ai-service-metrics | failed | 1.5 s |");
  expect(files[1]?.content).toContain("--- DRA API resources ---");
  // evidence holding a fence cannot close the block early
  expect(files[2]?.content).toContain("````text\n```\nx\n````");
});

/**
 * One full `aicr validate` with all sixteen checks (examples/recipe-conformance.yaml) on the real
 * control plane with every stand-in healthy (test/validate/conformance/_all-standins.ts): the wall
 * time of the run and each check's own CTRF duration, medians of the timed runs after one warm-up.
 * Each run waits for the run's namespaces to be gone before the next starts (not timed), and
 * Karpenter's added nodes are retired between runs, as the test suite does.
 *
 *   bun scripts/bench/conformance.ts [--runs 5]
 *
 * Build first (npm run build). Every run must exit 0 with all sixteen passed, else the script fails
 * with the run's stderr tail. Figures go to docs/performance.md by hand; nothing asserts a threshold.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { KubeClient } from "../../src/kube/client.ts";
import { NCCL_TEST_IMAGE } from "../../test/cluster/standins/trainer.ts";
import { AICR, baseEnv, ROOT } from "../../test/e2e/_aicr.ts";
import { IMAGE, NS } from "../../test/validate/_harness.ts";
import { allStandinsCluster, installAllStandins } from "../../test/validate/conformance/_all-standins.ts";
import { median } from "./snapshot-common.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const runs = Number(values.runs);
const cluster = await allStandinsCluster();
const standins = await installAllStandins(cluster);
const kubeconfig = cluster.kubeconfigFor("admin");
const client = KubeClient.connect({ kubeconfig, env: {} });

async function runOnce(i: number): Promise<{ wallMs: number; checks: Record<string, number> }> {
  const runId = `20261202-190000-${i.toString(16).padStart(16, "0")}`;
  const args = ["validate", "-r", join(ROOT, "examples/recipe-conformance.yaml")];
  args.push("-s", join(ROOT, "test/validate/fixtures/snapshot-h100-eks.yaml"), "-t", "json");
  args.push("--nccl-image", NCCL_TEST_IMAGE, "--run-id", runId, "-k", kubeconfig, "-n", NS, "--image", IMAGE);
  const start = performance.now();
  const proc = Bun.spawn([AICR, ...args], { cwd: ROOT, env: baseEnv(), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const wallMs = performance.now() - start;
  const tests =
    code === 0
      ? (JSON.parse(stdout).results.tests as {
          name: string;
          status: string;
          duration: number;
          suite: string[];
        }[])
      : [];
  const checks = tests.filter((t) => t.suite[0] !== "readiness");
  if (code !== 0 || checks.length !== 16 || checks.some((t) => t.status !== "passed"))
    throw new Error(`run ${i}: exit ${code}\n${stderr.slice(-3000)}`);
  // the run's namespaces gone before the next (a namespace's deletion finishes after the run)
  for (let waited = 0; waited < 120_000; waited += 500) {
    const left = (await client.list<{ metadata?: { name?: string } }>("v1", "Namespace")).items.filter((n) =>
      n.metadata?.name?.endsWith(runId),
    );
    if (left.length === 0) break;
    await Bun.sleep(500);
  }
  await standins.retireAddedNodes();
  return { wallMs, checks: Object.fromEntries(checks.map((t) => [t.name, t.duration])) };
}

try {
  await runOnce(0);
  const timed: { wallMs: number; checks: Record<string, number> }[] = [];
  for (let i = 1; i <= runs; i++) timed.push(await runOnce(i));
  const names = Object.keys(timed[0]?.checks ?? {});
  const row = (label: string, xs: number[]) =>
    `| ${label.padEnd(26)} | ${String(Math.round(median(xs))).padStart(6)} ms | ${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))} ms |`;
  const lines = [
    `aicr validate, all sixteen checks, ${runs} runs after a warm-up (real control plane, every stand-in healthy):`,
    "| what | median | range |",
    "| --- | --- | --- |",
    row(
      "the whole run (wall)",
      timed.map((t) => t.wallMs),
    ),
    ...names.map((n) =>
      row(
        n,
        timed.map((t) => t.checks[n] ?? 0),
      ),
    ),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
} finally {
  await standins.stop();
  await cluster.stop();
}

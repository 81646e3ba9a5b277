/**
 * Benchmark (c): scale.
 *  1. 64 concurrent runs through the SDK `collectSnapshot` in one process, one namespace, agents on the
 *     fake's in-process function runtime (near-instant): all succeed, zero crosstalk (each result
 *     carries its own run ID), wall vs one run, and this process's peak RSS (fake cluster included).
 *  2. 16 concurrent CLI processes (dist/aicr) whose agents run the compiled binary too: all succeed,
 *     zero crosstalk, and each CLI process's peak RSS.
 *
 * The SDK part runs against the fake cluster in a child process (an apiserver is not in the caller's
 * process), once with no added latency and once with 50 ms per request.
 *
 *   bun scripts/bench/snapshot-scale.ts [--sdk 64] [--cli 16] [--latency 0,50]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { resolveSnapshotOptions } from "../../src/commands/_snapshot-flags.ts";
import { createLogger } from "../../src/core/log.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { collectSnapshot } from "../../src/remote/collect-snapshot.ts";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { AGENT_IMAGE, snapshotCluster } from "../../test/snapshot/_harness.ts";
import { INSTANT_IMAGE, median, mib, runCli, withPeakRss } from "./snapshot-common.ts";

const { values } = parseArgs({
  options: { sdk: { type: "string" }, cli: { type: "string" }, latency: { type: "string" } },
});
const SDK_RUNS = Number(values.sdk ?? 64);
/** Per-request latency added by the fake: none (pure CPU on this machine) and one like bench (a)'s. */
const LATENCIES = (values.latency ?? "0,50").split(",").map(Number);
const CLI_RUNS = Number(values.cli ?? 16);
const NS = "scale";

/** The fake cluster in a child process (scripts/bench/fake-server.ts), so this process runs only aicr. */
async function startFake(
  latencyMs: number,
): Promise<{ kubeconfig: string; cpuMs: () => number; stop: () => Promise<void> }> {
  const proc = Bun.spawn(
    [process.execPath, join(import.meta.dir, "fake-server.ts"), "--latency", String(latencyMs)],
    { stdin: "pipe", stdout: "pipe", stderr: "inherit" },
  );
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the fake cluster exited before printing KUBECONFIG");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const kubeconfig = text.match(/KUBECONFIG=(\S+)/)?.[1];
  if (!kubeconfig) throw new Error(`unexpected output from the fake cluster: ${text}`);
  return {
    kubeconfig,
    // utime + stime of the fake's process, in clock ticks (100 a second on Linux).
    cpuMs: () => {
      const fields = readFileSync(`/proc/${proc.pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    stop: async () => {
      proc.stdin.end();
      await proc.exited;
    },
  };
}

/** Run objects still standing, read through the API as an operator would. */
async function leftoversViaApi(client: KubeClient): Promise<number> {
  const selector = { labelSelector: "aicr.run/run-id" };
  const kinds: [string, string, string | undefined][] = [
    ["v1", "ServiceAccount", NS],
    ["rbac.authorization.k8s.io/v1", "Role", NS],
    ["rbac.authorization.k8s.io/v1", "RoleBinding", NS],
    ["batch/v1", "Job", NS],
    ["v1", "ConfigMap", NS],
    ["rbac.authorization.k8s.io/v1", "ClusterRole", undefined],
    ["rbac.authorization.k8s.io/v1", "ClusterRoleBinding", undefined],
  ];
  const counts = await Promise.all(
    kinds.map(([apiVersion, kind, namespace]) =>
      client.list(apiVersion, kind, { ...selector, namespace }).then((l) => l.items.length),
    ),
  );
  return counts.reduce((a, b) => a + b, 0);
}

async function sdk(latencyMs: number): Promise<void> {
  const fake = await startFake(latencyMs);
  try {
    const client = KubeClient.connect({ kubeconfig: fake.kubeconfig, env: {} });
    const log = createLogger({ json: true, write: () => {} });
    const options = resolveSnapshotOptions(
      { namespace: NS, image: INSTANT_IMAGE, imagePullSecrets: [], nodeSelectors: [], tolerations: [] },
      {},
    );
    const one = () =>
      collectSnapshot({ ...options, client, log, signal: new AbortController().signal }).then((r) => ({
        runId: r.runId,
        docRunId: String(r.document.metadata["run-id"]),
      }));
    await one(); // warm: namespace, connections
    const singles: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await one();
      singles.push(performance.now() - t0);
    }
    const cpu0 = process.cpuUsage();
    const fakeCpu0 = fake.cpuMs();
    const t0 = performance.now();
    const { value: results, peakRss } = await withPeakRss(() =>
      Promise.allSettled(Array.from({ length: SDK_RUNS }, one)),
    );
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const fakeCpu = fake.cpuMs() - fakeCpu0;
    const ok = results.filter((r) => r.status === "fulfilled").map((r) => r.value);
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    const crosstalk = ok.filter((r) => r.runId !== r.docRunId).length;
    const distinct = new Set(ok.map((r) => r.runId)).size;
    console.log(
      `SDK: ${SDK_RUNS} concurrent collectSnapshot() in one process, one namespace; fake cluster in its own process, ${latencyMs} ms added per request`,
    );
    console.log(`  succeeded:            ${ok.length}/${SDK_RUNS} (distinct run IDs ${distinct})`);
    for (const f of failed.slice(0, 3))
      console.log(`  failure: ${(f.reason as Error).message.split("\n")[0]}`);
    console.log(`  crosstalk:            ${crosstalk}`);
    console.log(`  run objects left:     ${await leftoversViaApi(client)}`);
    console.log(`  one run (median):     ${median(singles).toFixed(0)} ms`);
    console.log(
      `  ${SDK_RUNS} runs, wall:        ${wall.toFixed(0)} ms (${(wall / median(singles)).toFixed(1)}× one run)`,
    );
    console.log(
      `  aicr CPU, all runs:   ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms (${((cpu.user + cpu.system) / 1000 / SDK_RUNS).toFixed(1)} ms a run)`,
    );
    console.log(`  fake cluster CPU:     ${fakeCpu} ms (its own process; one event loop)`);
    console.log(`  peak RSS (process):   ${mib(peakRss)} (aicr only: the fake runs elsewhere)`);
  } finally {
    await fake.stop();
  }
}

async function cli(): Promise<void> {
  const cluster = await snapshotCluster();
  try {
    const admin = cluster.kubeconfigFor("admin");
    const args = ["-n", NS, "--image", AGENT_IMAGE];
    const warm = await runCli(admin, args);
    if (warm.code !== 0) throw new Error(warm.stderr);
    const t0 = performance.now();
    const results = await Promise.all(Array.from({ length: CLI_RUNS }, () => runCli(admin, args)));
    const wall = performance.now() - t0;
    const ok = results.filter((r) => r.code === 0);
    const crosstalk = ok.filter((r) => {
      const id = r.stderr.match(/runID=(\S+)/)?.[1];
      return !id || String(parseSnapshot(r.stdout, id).metadata["run-id"]) !== id;
    }).length;
    const rss = results.map((r) => r.maxRss);
    console.log(
      `CLI: ${CLI_RUNS} concurrent dist/aicr snapshot processes, agents = dist/aicr, one namespace`,
    );
    console.log(`  succeeded:            ${ok.length}/${CLI_RUNS}`);
    for (const f of results.filter((r) => r.code !== 0).slice(0, 3))
      console.log(`  failure (exit ${f.code}): ${f.stderr.split("\n").slice(-3).join(" | ")}`);
    console.log(`  crosstalk:            ${crosstalk}`);
    console.log(
      `  run objects left:     ${await leftoversViaApi(KubeClient.connect({ kubeconfig: admin, env: {} }))}`,
    );
    console.log(`  one run (warm-up):    ${warm.ms.toFixed(0)} ms`);
    console.log(
      `  ${CLI_RUNS} runs, wall:        ${wall.toFixed(0)} ms (${(wall / warm.ms).toFixed(1)}× one run)`,
    );
    console.log(
      `  peak RSS per CLI:     max ${mib(Math.max(...rss))}, median ${mib(median(rss))}, sum ${mib(rss.reduce((a, b) => a + b, 0))}`,
    );
  } finally {
    await cluster.stop();
  }
}

for (const latency of LATENCIES) await sdk(latency);
if (CLI_RUNS > 0) await cli();

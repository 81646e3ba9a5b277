/**
 * Benchmark (c): scale.
 *  1. 64 concurrent runs through the SDK `collectSnapshot` in one process, one namespace, agents on the
 *     fake's in-process function runtime (near-instant): all succeed, zero crosstalk (each result
 *     carries its own run ID), wall vs one run, and this process's peak RSS (fake cluster included).
 *  2. 16 concurrent CLI processes (dist/aicr) whose agents run the compiled binary too: all succeed,
 *     zero crosstalk, and each CLI process's peak RSS.
 *
 *   bun scripts/bench/snapshot-scale.ts [--sdk 64] [--cli 16]
 */
import { parseArgs } from "node:util";
import { collectSnapshot } from "../../src/controller/collect-snapshot.ts";
import { resolveSnapshotOptions } from "../../src/controller/options.ts";
import { createLogger } from "../../src/core/log.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { resource } from "../../test/cluster/resources.ts";
import type { Cluster } from "../../test/cluster/server.ts";
import { AGENT_IMAGE, snapshotCluster } from "../../test/snapshot/_harness.ts";
import {
  INSTANT_IMAGE,
  instantCluster,
  median,
  mib,
  runCli,
  snapshotTemplate,
  withPeakRss,
} from "./snapshot-common.ts";

const { values } = parseArgs({
  options: { sdk: { type: "string" }, cli: { type: "string" } },
});
const SDK_RUNS = Number(values.sdk ?? 64);
const CLI_RUNS = Number(values.cli ?? 16);
const NS = "scale";

function leftovers(cluster: Cluster): number {
  const labelled = (plural: string, namespace?: string) =>
    cluster.store
      .list(resource(plural), namespace ? { namespace } : {})
      .items.filter((o) => o.metadata.labels?.["aicr.run/run-id"] !== undefined).length;
  return (
    ["serviceaccounts", "roles", "rolebindings", "jobs", "configmaps"].reduce(
      (n, p) => n + labelled(p, NS),
      0,
    ) +
    labelled("clusterroles") +
    labelled("clusterrolebindings")
  );
}

async function sdk(): Promise<void> {
  const cluster = await instantCluster(await snapshotTemplate());
  try {
    const client = KubeClient.connect({ kubeconfig: cluster.kubeconfigFor("admin"), env: {} });
    const log = createLogger({ json: true, write: () => {} });
    const options = resolveSnapshotOptions(
      { namespace: NS, image: INSTANT_IMAGE, imagePullSecrets: [], nodeSelectors: [], tolerations: [] },
      {},
    );
    const one = () =>
      collectSnapshot({ ...options, client, log, signal: new AbortController().signal }).then((r) => {
        const doc = parseSnapshot(r.content, r.runId);
        return { runId: r.runId, docRunId: String(doc.metadata["run-id"]) };
      });
    await one(); // warm: namespace, connections, discovery
    const singles: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await one();
      singles.push(performance.now() - t0);
    }
    const t0 = performance.now();
    const { value: results, peakRss } = await withPeakRss(() =>
      Promise.allSettled(Array.from({ length: SDK_RUNS }, one)),
    );
    const wall = performance.now() - t0;
    const ok = results.filter((r) => r.status === "fulfilled").map((r) => r.value);
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    const crosstalk = ok.filter((r) => r.runId !== r.docRunId).length;
    const distinct = new Set(ok.map((r) => r.runId)).size;
    console.log(`SDK: ${SDK_RUNS} concurrent collectSnapshot() in one process, one namespace`);
    console.log(`  succeeded:            ${ok.length}/${SDK_RUNS} (distinct run IDs ${distinct})`);
    for (const f of failed.slice(0, 3))
      console.log(`  failure: ${(f.reason as Error).message.split("\n")[0]}`);
    console.log(`  crosstalk:            ${crosstalk}`);
    console.log(`  run objects left:     ${leftovers(cluster)}`);
    console.log(`  one run (median):     ${median(singles).toFixed(0)} ms`);
    console.log(
      `  ${SDK_RUNS} runs, wall:        ${wall.toFixed(0)} ms (${(wall / median(singles)).toFixed(1)}× one run)`,
    );
    console.log(`  peak RSS (process):   ${mib(peakRss)} (the fake cluster and its controllers included)`);
  } finally {
    await cluster.stop();
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
    console.log(`  run objects left:     ${leftovers(cluster)}`);
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

await sdk();
await cli();

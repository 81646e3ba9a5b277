/**
 * Benchmark (a): sequential round trips on a snapshot run's critical path. Every request gets 50 ms
 * of injected latency; the agent is near-instant and makes no request of its own, so only the CLI's
 * requests are on the clock. Prints the chain of requests that forms the critical path.
 *
 * On the real backend the latency is added by the fault proxy in front of kube-apiserver.
 *
 *   bun scripts/bench/snapshot-latency.ts [--latency 50] [--runs 3] [--backend fake|real]
 */
import { parseArgs } from "node:util";
import {
  backendArg,
  criticalPath,
  INSTANT_IMAGE,
  instantCluster,
  median,
  runCli,
  snapshotTemplate,
  timeRequests,
} from "./snapshot-common.ts";

const { values } = parseArgs({
  options: { latency: { type: "string" }, runs: { type: "string" }, backend: { type: "string" } },
});
const BACKEND = backendArg(values.backend);
const LATENCY = Number(values.latency ?? 50);
const RUNS = Number(values.runs ?? 3);

const cluster = await instantCluster(await snapshotTemplate(), { backend: BACKEND });
const at = timeRequests(cluster);
const admin = cluster.kubeconfigFor("admin");
try {
  const zero: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = await runCli(admin, ["-n", "bench", "--image", INSTANT_IMAGE]);
    if (r.code !== 0) throw new Error(r.stderr);
    zero.push(r.ms);
  }
  const fault = cluster.faults.add({ path: /.*/, nth: 0, latencyMs: LATENCY });
  const slow: number[] = [];
  let chain: ReturnType<typeof criticalPath> = [];
  let requests = 0;
  for (let i = 0; i < RUNS; i++) {
    const since = cluster.log.entries.at(-1)?.seq ?? 0;
    const r = await runCli(admin, ["-n", "bench", "--image", INSTANT_IMAGE]);
    if (r.code !== 0) throw new Error(r.stderr);
    slow.push(r.ms);
    const mine = cluster.log.entries.filter((e) => e.seq > since && e.user === "admin");
    requests = mine.length;
    chain = criticalPath(mine, at, LATENCY);
  }
  fault.remove();
  const added = median(slow) - median(zero);
  console.log(`backend:                        ${BACKEND}`);
  console.log(`latency per request:            ${LATENCY} ms`);
  console.log(`requests per run (CLI):         ${requests}`);
  console.log(`wall, no latency (median):      ${median(zero).toFixed(0)} ms`);
  console.log(`wall, ${LATENCY} ms latency (median):   ${median(slow).toFixed(0)} ms`);
  console.log(`added wall / latency:           ${(added / LATENCY).toFixed(1)} round trips`);
  console.log(`critical path from the log:     ${chain.length} sequential round trips`);
  for (const [i, e] of chain.entries()) {
    const q = e.query.watch ? " (watch)" : e.query.dryRun ? " (dryRun)" : e.query.follow ? " (follow)" : "";
    console.log(`  ${String(i + 1).padStart(2)}. ${e.method} ${e.path}${q}`);
  }
} finally {
  await cluster.stop();
}

/**
 * The near-instant fake cluster of the snapshot benchmarks, in a process of its own, as an apiserver
 * is: a benchmark's client process then spends its CPU on aicr alone. Prints `KUBECONFIG=<path>`, then
 * serves until SIGTERM or stdin closes.
 *
 *   bun scripts/bench/fake-server.ts [--latency <ms per request>]
 */
import { parseArgs } from "node:util";
import { instantCluster, snapshotTemplate } from "./snapshot-common.ts";

const { values } = parseArgs({ options: { latency: { type: "string" } } });
const latency = Number(values.latency ?? 0);

const cluster = await instantCluster(await snapshotTemplate());
if (latency > 0) cluster.faults.add({ path: /.*/, nth: 0, latencyMs: latency });
console.log(`KUBECONFIG=${cluster.kubeconfigFor("admin")}`);

const stop = async () => {
  await cluster.stop();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.stdin.on("end", stop);
process.stdin.resume();

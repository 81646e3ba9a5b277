/**
 * aicr snapshot --all-nodes on the fake cluster (in this process) with a near-instant agent, at 10, 100
 * and 1,000 GPU nodes: wall time, requests per node, watch streams opened, peak RSS of aicr. Not a
 * test: the figures go to docs/performance.md.
 *
 *   bun scripts/bench/fleet.ts [--nodes 10,100,1000] [--parallelism 8] [--backend fake|real] [--against <rev>]
 *
 * --backend real: the real control plane (its scheduler, Job controller and garbage collector, our
 * process kubelet), with the same near-instant agent standing in for the binary in each pod.
 * --against: <rev>'s own build runs the same fleet first, on the same cluster, one row each.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { node } from "../../test/cluster/nodes.ts";
import { startTestCluster, type TestCluster } from "../../test/cluster/testbed.ts";
import { buildRevision, type RevisionBuild } from "./_revision.ts";
import { AICR, instantAgent, mib, runCli, snapshotTemplate } from "./snapshot-common.ts";

const { values } = parseArgs({
  options: {
    nodes: { type: "string" },
    parallelism: { type: "string" },
    backend: { type: "string" },
    against: { type: "string" },
  },
});
using previous: RevisionBuild | undefined = values.against ? await buildRevision(values.against) : undefined;
const binaries: [string, string][] = [
  ...(previous ? [[previous.rev, previous.binary] as [string, string]] : []),
  ["this tree", AICR],
];
const backend = values.backend === "real" ? "real" : "fake";
const sizes = (values.nodes ?? "10,100,1000").split(",").map(Number);
const parallelism = values.parallelism ?? "8";
const template = await snapshotTemplate();

console.log(
  `| build | nodes | parallelism | wall | per node | aicr CPU per node | requests | requests/node | watch streams | peak RSS | exit |`,
);
console.log(`|---|---|---|---|---|---|---|---|---|---|---|`);
for (const n of sizes) {
  let cluster: TestCluster | undefined;
  cluster = await startTestCluster(backend, {
    nodes: Array.from({ length: n }, (_, i) => node(`gpu-${String(i).padStart(4, "0")}`, { gpus: 8 })),
    runtime: () => instantAgent(() => cluster as TestCluster, template),
  });
  // A first pod on each node pays its warm-up (the node's first ServiceAccount token, pod directory,
  // watches): one fleet over every node, not measured, takes it for every build alike.
  const warm = await runCli(cluster.kubeconfigFor("admin"), [
    "-n",
    "bench",
    "--all-nodes",
    "--parallelism",
    parallelism,
    "--timeout",
    "10m",
    "-o",
    `${tmpdir()}/aicr-fleet-warm-${process.pid}/`,
  ]);
  if (warm.code !== 0) console.error(warm.stderr.slice(-2000));
  else
    console.log(
      `| (warm-up, this tree) | ${n} | ${parallelism} | ${(warm.ms / 1000).toFixed(1)} s | ${(warm.ms / n).toFixed(0)} ms | | | | | | |`,
    );
  await rm(`${tmpdir()}/aicr-fleet-warm-${process.pid}`, { recursive: true, force: true });
  for (const [build, binary] of binaries) {
    const out = await mkdtemp(join(tmpdir(), "aicr-fleet-bench-"));
    const from = cluster.log.entries.at(-1)?.seq ?? 0;
    const r = await runCli(
      cluster.kubeconfigFor("admin"),
      ["-n", "bench", "--all-nodes", "--parallelism", parallelism, "--timeout", "10m", "-o", `${out}/fleet/`],
      binary,
    );
    const since = cluster.log.entries.filter((e) => e.seq > from && e.user === "admin");
    const watches = since.filter((e) => e.query.watch === "true").length;
    const files = (await readdir(join(out, "fleet")).catch(() => [])).length;
    console.log(
      `| ${build} | ${n} | ${parallelism} | ${(r.ms / 1000).toFixed(1)} s | ${(r.ms / n).toFixed(0)} ms | ${(r.cpuMs / n).toFixed(1)} ms | ${since.length} | ${(since.length / n).toFixed(2)} | ${watches} | ${mib(r.maxRss)} | ${r.code}${files !== n + 1 ? ` (${files} files)` : ""} |`,
    );
    if (r.code !== 0) console.error(r.stderr.slice(-2000));
    await rm(out, { recursive: true, force: true });
  }
  await cluster.stop();
}

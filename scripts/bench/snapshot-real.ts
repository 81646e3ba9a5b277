/**
 * Benchmark (c) on the real control plane, and where its controllers' own latency goes.
 *  1. One `aicr snapshot` (agent: dist/aicr in our process kubelet) alone, then 16 concurrent CLI
 *     processes in one namespace: all succeed, zero crosstalk, zero run objects left, wall vs one run.
 *  2. For every run, from the informer mirror's event times: Job created → its pod created (the real Job
 *     controller), pod created → bound (kube-scheduler), bound → Running (our kubelet), Running →
 *     Succeeded (the agent itself), Succeeded → Job Complete (Job controller again; a run that ended on
 *     its proof may have deleted its Job before that), Succeeded → the Job deleted by aicr.
 *  3. The garbage collector: a ClusterRole owning a ServiceAccount, Role, RoleBinding and Job (a run
 *     after SIGKILL) — time from the ClusterRole's delete until its last dependent is gone.
 *
 *   bun scripts/bench/snapshot-real.ts [--cli 16] [--against <rev>]
 *
 * --against: then 16 concurrent CLI runs of <rev>'s build and of this tree's, alternated twice (the
 * agent in the pods is this tree's for both: only the CLI differs).
 */
import { parseArgs } from "node:util";
import { processRuntime } from "../../test/cluster/controllers/process-runtime.ts";
import { node } from "../../test/cluster/nodes.ts";
import type { KObject } from "../../test/cluster/objects.ts";
import { resource } from "../../test/cluster/resources.ts";
import { startTestCluster } from "../../test/cluster/testbed.ts";
import { buildRevision, type RevisionBuild } from "./_revision.ts";
import { AICR, H100_BIN, H100_ROOT, median, mib, runCli, runIdIn } from "./snapshot-common.ts";

const { values } = parseArgs({ options: { cli: { type: "string" }, against: { type: "string" } } });
using previous: RevisionBuild | undefined = values.against ? await buildRevision(values.against) : undefined;
const CLI_RUNS = Number(values.cli ?? 16);
const NS = "scale";
const IMAGE = "ghcr.io/nvidia/aicr:bench";

const cluster = await startTestCluster("real", {
  nodes: [node("gpu-node-1", { gpus: 8 }), node("cpu-node-1")],
  runtime: (api) =>
    processRuntime({
      images: { [IMAGE]: AICR },
      kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
      baseEnv: { PATH: `${H100_BIN}:${process.env.PATH}`, AICR_HOST_ROOT: H100_ROOT, NO_COLOR: "1" },
    }),
});

/** First time each (kind, uid, milestone) was seen in the mirror. */
const seen = new Map<string, number>();
const jobs = new Map<string, string>(); // job uid → run label
const pods = new Map<string, string>(); // pod uid → job uid
const mark = (k: string) => {
  if (!seen.has(k)) seen.set(k, performance.now());
};
cluster.store.subscribe((e) => {
  const o = e.object as KObject;
  const uid = o.metadata.uid ?? "";
  if (e.resource.plural === "jobs") {
    if (!jobs.has(uid)) jobs.set(uid, o.metadata.labels?.["aicr.run/run-id"] ?? "");
    mark(`job-created ${uid}`);
    if (
      (o.status?.conditions ?? []).some(
        (c: { type: string; status: string }) => c.type === "Complete" && c.status === "True",
      )
    )
      mark(`job-complete ${uid}`);
    if (o.metadata.deletionTimestamp || e.type === "DELETED") mark(`job-deleted ${uid}`);
  }
  if (e.resource.plural === "pods") {
    const owner = o.metadata.ownerReferences?.find((r) => r.controller)?.uid;
    if (!owner) return;
    pods.set(uid, owner);
    mark(`pod-created ${owner}`);
    if (o.spec?.nodeName) mark(`pod-bound ${owner}`);
    if (o.status?.phase === "Running") mark(`pod-running ${owner}`);
    if (o.status?.phase === "Succeeded") mark(`pod-succeeded ${owner}`);
  }
});

const show = (ms: number): string =>
  Number.isFinite(ms) ? `${ms.toFixed(0).padStart(6)} ms` : "     — (no run got there)".padEnd(9);

function controllerLatencies(): Record<string, number> {
  const steps: [string, string, string][] = [
    ["Job controller: Job → pod", "job-created", "pod-created"],
    ["kube-scheduler: pod → bound", "pod-created", "pod-bound"],
    ["our kubelet: bound → Running", "pod-bound", "pod-running"],
    ["the agent: Running → Succeeded", "pod-running", "pod-succeeded"],
    ["Job controller: Succeeded → Complete", "pod-succeeded", "job-complete"],
    // The run ends on its proof (deployer/run-end.ts), then deletes its Job: often before Complete.
    ["aicr: Succeeded → its Job deleted", "pod-succeeded", "job-deleted"],
  ];
  const out: Record<string, number> = {};
  for (const [label, from, to] of steps) {
    const ds = [...jobs.keys()]
      .map((uid) => (seen.get(`${to} ${uid}`) ?? Number.NaN) - (seen.get(`${from} ${uid}`) ?? Number.NaN))
      .filter((d) => Number.isFinite(d));
    // A step no run reached (a Job deleted before it was Complete) has no figure.
    out[label] = ds.length > 0 ? median(ds) : Number.NaN;
  }
  return out;
}

const leftovers = (): number =>
  [
    "serviceaccounts",
    "roles",
    "rolebindings",
    "jobs",
    "configmaps",
    "clusterroles",
    "clusterrolebindings",
    "pods",
  ]
    .map((p) => cluster.store.list(resource(p), { labelSelector: "aicr.run/run-id" }).items.length)
    .reduce((a, b) => a + b, 0);

/** Until every run object and run pod is gone (the garbage collector takes the deleted Jobs' pods). */
const untilNoLeftovers = (): Promise<void> =>
  new Promise<void>((resolve) => {
    if (leftovers() === 0) return resolve();
    const stop = cluster.store.subscribe(() => {
      if (leftovers() === 0) {
        stop();
        resolve();
      }
    });
  });

async function gcTiming(): Promise<number> {
  const owner = await cluster.store.create(resource("clusterroles"), {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "gc-bench-anchor" },
    rules: [],
  });
  const ref = [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      name: "gc-bench-anchor",
      uid: owner.metadata.uid!,
      blockOwnerDeletion: true,
    },
  ];
  const meta = (name: string) => ({ name, namespace: NS, ownerReferences: ref });
  await cluster.store.create(resource("serviceaccounts"), {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: meta("gc-bench"),
  });
  await cluster.store.create(resource("roles"), {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: meta("gc-bench"),
    rules: [],
  });
  await cluster.store.create(resource("configmaps"), {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: meta("gc-bench"),
    data: {},
  });
  const t0 = performance.now();
  await cluster.store.delete(resource("clusterroles"), undefined, "gc-bench-anchor", {
    propagationPolicy: "Background",
  });
  const gone = () =>
    !cluster.store.find(resource("serviceaccounts"), NS, "gc-bench") &&
    !cluster.store.find(resource("roles"), NS, "gc-bench") &&
    !cluster.store.find(resource("configmaps"), NS, "gc-bench");
  await new Promise<void>((resolve) => {
    if (gone()) return resolve();
    const stop = cluster.store.subscribe(() => {
      if (gone()) {
        stop();
        resolve();
      }
    });
  });
  return performance.now() - t0;
}

try {
  const admin = cluster.kubeconfigFor("admin");
  const args = ["-n", NS, "--image", IMAGE];
  const warm = await runCli(admin, args); // namespace created, caches warm
  if (warm.code !== 0) throw new Error(warm.stderr);
  const singles: number[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await runCli(admin, args);
    if (r.code !== 0) throw new Error(r.stderr);
    singles.push(r.ms);
  }
  const single = controllerLatencies();
  jobs.clear();
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: CLI_RUNS }, () => runCli(admin, args)));
  const wall = performance.now() - t0;
  const ok = results.filter((r) => r.code === 0);
  const crosstalk = ok.filter((r) => runIdIn(r.stdout) !== r.stderr.match(/runID=(\S+)/)?.[1]).length;
  const concurrent = controllerLatencies();
  // Each run deleted its own objects; its pod goes with its Job through the garbage collector.
  const atExit = leftovers();
  const g0 = performance.now();
  await untilNoLeftovers();
  const drained = performance.now() - g0;
  console.log(
    `real control plane (Kubernetes ${"v1.36.3"}): kube-apiserver + etcd + controller-manager + scheduler, our kubelet`,
  );
  console.log(`one run (median of 3):        ${median(singles).toFixed(0)} ms`);
  console.log(
    `${CLI_RUNS} concurrent CLI runs:     ${ok.length}/${CLI_RUNS} succeeded, crosstalk ${crosstalk}`,
  );
  console.log(
    `  run objects left:           ${atExit} as the last CLI exited (deleted Jobs and their pods, in the garbage collector), 0 after ${drained.toFixed(0)} ms more (garbage collector)`,
  );
  console.log(
    `  wall:                       ${wall.toFixed(0)} ms (${(wall / median(singles)).toFixed(1)}× one run)`,
  );
  console.log(`  CLI peak RSS (median):      ${mib(median(results.map((r) => r.maxRss)))}`);
  for (const f of results.filter((r) => r.code !== 0).slice(0, 3))
    console.log(`  failure (${f.code}): ${f.stderr.split("\n").slice(-3).join(" | ")}`);
  console.log("controller latency per run (median; one run alone | 16 at once):");
  for (const k of Object.keys(single))
    console.log(`  ${k.padEnd(40)} ${show(single[k]!)} | ${show(concurrent[k]!)}`);
  console.log(`garbage collector: anchor deleted → 3 dependents gone: ${(await gcTiming()).toFixed(0)} ms`);
  if (previous) {
    const walls: Record<string, string[]> = { [previous.rev]: [], "this tree": [] };
    for (let round = 0; round < 2; round++)
      for (const [build, binary] of [
        [previous.rev, previous.binary],
        ["this tree", AICR],
      ] as const) {
        const c0 = performance.now();
        const rs = await Promise.all(Array.from({ length: CLI_RUNS }, () => runCli(admin, args, binary)));
        const ms = performance.now() - c0;
        const failed = rs.filter((r) => r.code !== 0).length;
        walls[build]!.push(`${ms.toFixed(0)} ms${failed ? ` (${failed} failed)` : ""}`);
        await untilNoLeftovers();
      }
    console.log(`${CLI_RUNS} concurrent CLI runs, interleaved (the same agent in the pods):`);
    for (const [build, ws] of Object.entries(walls)) console.log(`  ${build.padEnd(12)} ${ws.join(", ")}`);
  }
} finally {
  await cluster.stop();
}

/**
 * Shared fixture for the controller-mode e2e tests: a cluster (either backend of testbed.ts) whose
 * kubelet runs the compiled binary as the agent, a spawner for `dist/aicr snapshot`, and store/request-log
 * readers. Every wait ends on a condition (store change, request log entry, fault hit), through
 * test/support/until.ts; the bounds only stop a stuck test. Store writes are awaited: on the real
 * backend they resolve once the mirror has them.
 */
import { join } from "node:path";
import { processRuntime } from "../cluster/controllers/process-runtime.ts";
import type { RunContext } from "../cluster/controllers/runtime.ts";
import { node } from "../cluster/nodes.ts";
import type { KObject } from "../cluster/objects.ts";
import type { LoggedRequest } from "../cluster/request-log.ts";
import { resource } from "../cluster/resources.ts";
import {
  type Backend,
  startTestCluster,
  type TestCluster,
  type TestClusterOptions,
} from "../cluster/testbed.ts";
import { AICR, baseEnv, ensureBuilt, ROOT } from "../e2e/_aicr.ts";
import { checksFor, untilGranted } from "../legacy/_seed.ts";
import { until, untilStore } from "../support/until.ts";

export type Cluster = TestCluster;

/** Mapped to dist/aicr by the kubelet (either backend's). */
export const AGENT_IMAGE = "ghcr.io/nvidia/aicr:test";
/** Function-runtime images: exits 1 with a termination message / runs until its pod is deleted. */
export const FAILING_IMAGE = "ghcr.io/nvidia/aicr:fails";
export const HANGING_IMAGE = "ghcr.io/nvidia/aicr:hangs";
export const UNPULLABLE_IMAGE = "ghcr.io/nvidia/aicr:missing";
/** Says a line, is silent for QUIET_MS, says another, exits 1 (it writes no result). */
export const QUIET_IMAGE = "ghcr.io/nvidia/aicr:quiet";
export const QUIET_MS = 10_000;
/** dist/aicr without its provenance env: a document naming no pod (as the Go original's agent writes). */
export const UNSTAMPED_IMAGE = "ghcr.io/nvidia/aicr:unstamped";
/** dist/aicr, then exit 3 with an error line: the snapshot written, the pod failed. */
export const FAILS_AFTER_WRITE_IMAGE = "ghcr.io/nvidia/aicr:fails-after-write";
export const H100_ROOT = join(ROOT, "test/fixtures/hosts/h100-node");
export const H100_BIN = join(ROOT, "test/fixtures/bin/h100");
/** Bound on a stuck wait; never part of an assertion. */
export const STUCK_MS = 60_000;
export const TEST_MS = 90_000;
/** Starting a cluster: a real control plane takes seconds on a loaded box. */
export const SETUP_MS = 120_000;

async function functionImages(ctx: RunContext): Promise<{ exitCode: number; message?: string }> {
  const image = (ctx.container as { image?: string }).image;
  if (image === FAILING_IMAGE) {
    for (let i = 1; i <= 60; i++) ctx.stdout(`${JSON.stringify({ level: "info", msg: `step ${i}` })}\n`);
    ctx.stdout(`${JSON.stringify({ level: "error", msg: "nvidia-smi not found" })}\n`);
    return { exitCode: 1, message: "collector GPU failed: nvidia-smi not found" };
  }
  if (image === QUIET_IMAGE) {
    ctx.stdout(`${JSON.stringify({ level: "info", msg: "quiet agent: going silent" })}\n`);
    await Bun.sleep(QUIET_MS);
    ctx.stdout(`${JSON.stringify({ level: "info", msg: "quiet agent: speaking again" })}\n`);
    return { exitCode: 1, message: "quiet agent done" };
  }
  if (image === HANGING_IMAGE) {
    ctx.stdout(`${JSON.stringify({ level: "info", msg: "agent hanging until its pod is deleted" })}\n`);
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      ctx.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    return { exitCode: 143 };
  }
  return { exitCode: 0 };
}

/**
 * A GPU node and a CPU node; the agent image runs dist/aicr over the 8×H100 fixture host. The fake by
 * default (scripts/bench/snapshot-scale.ts calls it without a backend); `extra.https`: the fake over HTTPS.
 */
export async function snapshotCluster(
  backend: Backend = "fake",
  extra: Pick<TestClusterOptions, "https"> = {},
): Promise<Cluster> {
  await ensureBuilt();
  return startTestCluster(backend, {
    ...extra,
    nodes: [node("gpu-node-1", { gpus: 8 }), node("cpu-node-1")],
    unpullableImages: [UNPULLABLE_IMAGE],
    runtime: (api) =>
      processRuntime({
        images: {
          [AGENT_IMAGE]: AICR,
          [UNSTAMPED_IMAGE]: join(ROOT, "test/fixtures/agents/unstamped"),
          [FAILS_AFTER_WRITE_IMAGE]: join(ROOT, "test/fixtures/agents/fails-after-write"),
        },
        kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
        baseEnv: { PATH: `${H100_BIN}:${process.env.PATH}`, AICR_HOST_ROOT: H100_ROOT, NO_COLOR: "1" },
        fallback: functionImages,
      }),
  });
}

export interface Spawned {
  proc: ReturnType<typeof Bun.spawn>;
  stderrSoFar: () => string;
  done: Promise<{ code: number; stdout: string; stderr: string }>;
}

/** `dist/aicr snapshot <args>` with a clean environment and the given kubeconfig. */
export function spawnSnapshot(
  kubeconfig: string,
  args: string[],
  env: Record<string, string> = {},
  cwd: string = ROOT,
): Spawned {
  const proc = Bun.spawn([AICR, "snapshot", ...args], {
    cwd,
    env: baseEnv({ KUBECONFIG: kubeconfig, ...env }),
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  let err = "";
  const decoder = new TextDecoder();
  const stderr = (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) err += decoder.decode(chunk);
    return err;
  })();
  const done = (async () => {
    const [stdout, stderrText, code] = await Promise.all([
      new Response(proc.stdout as ReadableStream).text(),
      stderr,
      proc.exited,
    ]);
    return { code, stdout, stderr: stderrText };
  })();
  return { proc, stderrSoFar: () => err, done };
}

export function runSnapshot(
  kubeconfig: string,
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
) {
  return spawnSnapshot(kubeconfig, args, env, cwd).done;
}

/** Resolves with the first request-log entry that matches (already logged or future). */
export const untilRequest = (cluster: Cluster, match: (e: LoggedRequest) => boolean, what: string) =>
  until(() => cluster.log.entries.find(match), what, STUCK_MS);

const NAMESPACED = ["serviceaccounts", "roles", "rolebindings", "jobs", "configmaps"];
const CLUSTER = ["clusterroles", "clusterrolebindings"];
const isRunObject = (o: KObject) =>
  o.metadata.labels?.["aicr.run/run-id"] !== undefined ||
  (o.metadata.name ?? "").startsWith("aicr-agent-snapshot-");

/**
 * "Kind/name" of every run object in `namespace` plus every cluster-scoped run object (any
 * namespace: a test that keeps objects removes them before it ends), pods excluded.
 */
export function runObjects(cluster: Cluster, namespace: string, runId?: string): string[] {
  const out: string[] = [];
  const keep = (o: KObject) => {
    if (isRunObject(o) && (runId === undefined || (o.metadata.name ?? "").endsWith(runId)))
      out.push(`${o.kind}/${o.metadata.name}`);
  };
  for (const plural of NAMESPACED)
    for (const o of cluster.store.list(resource(plural), { namespace }).items) keep(o);
  for (const plural of CLUSTER) for (const o of cluster.store.list(resource(plural), {}).items) keep(o);
  return out.sort();
}

/**
 * Every run object in `namespace` (and cluster-wide) is gone. aicr deleted them before it exited; the
 * store is waited on because the real backend's mirror learns of a delete from its watch, a moment later.
 */
export const untilNoRunObjects = (cluster: Cluster, namespace: string, runId?: string) =>
  untilStore(
    cluster,
    () => runObjects(cluster, namespace, runId).length === 0,
    () => `no run objects in ${namespace}; left: ${runObjects(cluster, namespace, runId).join(", ")}`,
    STUCK_MS,
  );

/** The run's pods are removed by the garbage collector after the Job: waits until none is left. */
export const untilNoRunPods = (cluster: Cluster, namespace: string) =>
  untilStore(
    cluster,
    () =>
      cluster.store
        .list(resource("pods"), { namespace })
        .items.every((p) => p.metadata.labels?.["aicr.run/run-id"] === undefined),
    `no run pods left in ${namespace}`,
    STUCK_MS,
  );

/** Zero run objects in `namespace`, and zero run pods once the garbage collector has taken them. */
export async function untilNothingLeft(cluster: Cluster, namespace: string): Promise<void> {
  await untilNoRunObjects(cluster, namespace);
  await untilNoRunPods(cluster, namespace);
}

/** Mutating requests other than access reviews and server-side dry runs. */
export function writes(cluster: Cluster, since = 0): LoggedRequest[] {
  return cluster.log
    .mutatingRequests()
    .filter((e) => e.seq > since && !/reviews$/.test(e.path) && e.query.dryRun !== "All");
}

/** The activeDeadlineSeconds of every Job created in `namespace` since request `from`, from the request log. */
export const jobDeadlinesSince = (cluster: Cluster, namespace: string, from: number): number[] =>
  writes(cluster, from)
    .filter((e) => e.method === "POST" && e.path === `/apis/batch/v1/namespaces/${namespace}/jobs`)
    .map((e) => (e.body as { spec: { activeDeadlineSeconds: number } }).spec.activeDeadlineSeconds);

/** The seven kinds one prefix-mode snapshot run creates (its staging ConfigMap included). */
export const RUN_OBJECT_KINDS = [
  "ClusterRole",
  "ClusterRoleBinding",
  "ConfigMap",
  "Job",
  "Role",
  "RoleBinding",
  "ServiceAccount",
];

export function lastSeq(cluster: Cluster): number {
  return cluster.log.entries.at(-1)?.seq ?? 0;
}

/** The run ID the CLI logs first. */
export function runIdOf(stderr: string): string {
  const m = stderr.match(/runID=(\d{8}-\d{6}-[0-9a-f]{16})/);
  if (!m?.[1]) throw new Error(`no run ID in:\n${stderr}`);
  return m[1];
}

let nsCounter = 0;
/** A fresh namespace per test (created directly as admin, not through the request log). */
export async function freshNamespace(
  cluster: Cluster,
  tag: string,
  labels: Record<string, string> = {},
): Promise<string> {
  const name = `${tag}-${++nsCounter}`;
  await cluster.store.create(resource("namespaces"), {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels },
  });
  return name;
}

export function put(cluster: Cluster, plural: string, object: KObject): Promise<KObject> {
  return Promise.resolve(cluster.store.create(resource(plural), object));
}

/** An existing ServiceAccount (as for IRSA), optionally bound cluster-wide to `clusterRole`. */
export async function existingServiceAccount(
  cluster: Cluster,
  ns: string,
  name: string,
  clusterRole?: string,
): Promise<void> {
  await put(cluster, "serviceaccounts", {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name, namespace: ns },
  });
  if (!clusterRole) return;
  const rbac = "rbac.authorization.k8s.io";
  await put(cluster, "clusterrolebindings", {
    apiVersion: `${rbac}/v1`,
    kind: "ClusterRoleBinding",
    metadata: { name: `${ns}-${name}` },
    roleRef: { apiGroup: rbac, kind: "ClusterRole", name: clusterRole },
    subjects: [{ kind: "ServiceAccount", name, namespace: ns }],
  });
  const user = `system:serviceaccount:${ns}:${name}`;
  await untilGranted(cluster, { user, groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`] }, [
    { verb: "get", group: "", resource: "nodes" },
  ]);
}

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };

/** A user bound to `rules` in `namespace` (Role) and cluster-wide (ClusterRole); returns its kubeconfig. */
export async function userWith(
  cluster: Cluster,
  name: string,
  namespace: string,
  roleRules: Rule[],
  clusterRules: Rule[] = [],
): Promise<string> {
  cluster.addUser(name, []);
  const rbac = "rbac.authorization.k8s.io/v1";
  const subject = [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name }];
  if (roleRules.length > 0) {
    await put(cluster, "roles", {
      apiVersion: rbac,
      kind: "Role",
      metadata: { name, namespace },
      rules: roleRules,
    });
    await put(cluster, "rolebindings", {
      apiVersion: rbac,
      kind: "RoleBinding",
      metadata: { name, namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: subject,
    });
  }
  if (clusterRules.length > 0) {
    await put(cluster, "clusterroles", {
      apiVersion: rbac,
      kind: "ClusterRole",
      metadata: { name },
      rules: clusterRules,
    });
    await put(cluster, "clusterrolebindings", {
      apiVersion: rbac,
      kind: "ClusterRoleBinding",
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: subject,
    });
  }
  await untilGranted(cluster, { user: name, groups: [] }, [
    ...checksFor(roleRules, namespace),
    ...checksFor(clusterRules),
  ]);
  return cluster.kubeconfigFor(name);
}

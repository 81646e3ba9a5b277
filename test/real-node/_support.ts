/**
 * What the real-node suites share beyond test/cluster/real/node: a cluster with one real node whose
 * /run/systemd is a real systemd's (started as snapshot.test.ts does; a machine that cannot run it
 * fails the suite with the reason), kubectl as admin, and readings of the node's containers from
 * containerd (ctr) and from this host's /proc (what the container's process itself sees).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { KObject } from "../cluster/objects.ts";
import { realNodeMissing } from "../cluster/real/node/node.ts";
import { resource } from "../cluster/resources.ts";
import { startTestCluster, type TestCluster, type TestClusterOptions } from "../cluster/testbed.ts";
import { ensureBuilt } from "../e2e/_aicr.ts";
import { nodeBinaries } from "../node/build.ts";
import { type RealSystemd, realSystemdMissing, startRealSystemd } from "../support/real-systemd.ts";
import { until } from "../support/until.ts";

export const NODE = "real-gpu-1";
export const SETUP_MS = 300_000;
/**
 * A deleted pod's container goes at the kubelet's next container garbage collection (every minute),
 * after its grace period (30 s by default) if it had to be stopped.
 */
export const CONTAINER_GC_MS = 150_000;
/** A deleted pod's containers are stopped within its grace period (the agent's: 30 s). */
const STUCK_STOP_MS = 60_000;

export interface RealNodeCluster {
  cluster: TestCluster;
  kubectl: string;
  admin: string;
  stop(): Promise<void>;
}

/** A real cluster with the real node NODE (the project's image pushed, a real systemd), plus `extra`. */
export async function startRealNodeCluster(
  extra: Omit<TestClusterOptions, "realNode"> = {},
): Promise<RealNodeCluster> {
  // Nothing here is skipped: a machine that cannot run the node fails the suite with the reason.
  const missing = realNodeMissing() ?? realSystemdMissing();
  if (missing) throw new Error(`the real-node suite cannot run here: ${missing}`);
  await ensureBuilt();
  const systemd: RealSystemd = await startRealSystemd();
  let cluster: TestCluster;
  try {
    cluster = await startTestCluster("real", {
      ...extra,
      realNode: { name: NODE, aicrImage: true, systemdDir: join(systemd.runDir, "systemd") },
    });
  } catch (e) {
    await systemd.stop();
    throw e;
  }
  return {
    cluster,
    kubectl: await cluster.kubectl(),
    admin: cluster.kubeconfigFor("admin"),
    stop: async () => {
      await cluster.stop();
      await systemd.stop();
    },
  };
}

/** kubectl (the control plane's release) as admin. */
export async function kubectlAs(
  kubectl: string,
  kubeconfig: string,
  args: string[],
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([kubectl, "--kubeconfig", kubeconfig, ...args], {
    stdout: "pipe",
    stderr: "pipe",
    stdin: input === undefined ? "ignore" : new TextEncoder().encode(input),
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, stdout, stderr };
}

interface ContainerStatus {
  name: string;
  containerID?: string;
  state?: { running?: unknown; terminated?: { exitCode: number; reason?: string }; waiting?: unknown };
  user?: { linux?: { uid: number; gid: number; supplementalGroups?: number[] } };
}

/** The pods of a run (label aicr.run/run-id) in `namespace`, as the mirror has them. */
export const runPods = (cluster: TestCluster, namespace: string, runId?: string) =>
  cluster.store
    .list(resource("pods"), { namespace })
    .items.filter((p) =>
      runId === undefined
        ? p.metadata.labels?.["aicr.run/run-id"] !== undefined
        : p.metadata.labels?.["aicr.run/run-id"] === runId,
    );

/** The first container's status of a pod, from the mirror. */
export const containerStatus = (pod: KObject): ContainerStatus | undefined =>
  (pod.status as { containerStatuses?: ContainerStatus[] } | undefined)?.containerStatuses?.[0];

/** containerd's ID of a container status (`containerd://<id>`). */
export const containerdId = (s: ContainerStatus | undefined): string | undefined =>
  s?.containerID?.replace(/^containerd:\/\//, "") || undefined;

/**
 * The host PID of a container's process: the process whose cgroup path names the container's ID
 * (the node runs in a PID namespace of its own, so ctr's PIDs are the node's, not this host's).
 */
export function hostPidOf(containerId: string): number | undefined {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    let cgroups: string;
    try {
      cgroups = readFileSync(`/proc/${pid}/cgroup`, "utf8");
    } catch {
      continue;
    }
    if (cgroups.includes(containerId)) return Number(pid);
  }
  return undefined;
}

/** What a process sees of itself: its credentials and capabilities (/proc/<pid>/status) and its root mount. */
export function processView(pid: number): {
  uid: string[];
  gid: string[];
  capEff: string;
  capPrm: string;
  capBnd: string;
  noNewPrivs: string;
  rootMountOptions: string[];
} {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) =>
    status
      .split("\n")
      .find((l) => l.startsWith(`${name}:`))
      ?.slice(name.length + 1)
      .trim() ?? "";
  // mountinfo: "<id> <parent> <maj:min> <root> <mount point> <options> …"; the last mount at "/" is
  // the one the process sees.
  const root = readFileSync(`/proc/${pid}/mountinfo`, "utf8")
    .split("\n")
    .filter((l) => l.split(" ")[4] === "/")
    .at(-1);
  return {
    uid: field("Uid").split(/\s+/),
    gid: field("Gid").split(/\s+/),
    capEff: field("CapEff"),
    capPrm: field("CapPrm"),
    capBnd: field("CapBnd"),
    noNewPrivs: field("NoNewPrivs"),
    rootMountOptions: (root?.split(" ")[5] ?? "").split(","),
  };
}

/**
 * ctr against the real node's containerd. The node's own client (`node.ctr`) is the one its build put
 * in the node cache; when a later build of test/node replaced that directory while the node runs (another
 * suite rebuilt it), the current build's ctr — the same client, talking to the same socket — is used.
 */
export async function ctr(
  cluster: TestCluster,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const node = cluster.realNode!.node;
  try {
    return await node.ctr(args);
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOENT") throw e;
  }
  const r = Bun.spawn([(await nodeBinaries()).ctr, "--address", node.containerdSocket, ...args], {
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(r.stdout).text(),
    new Response(r.stderr).text(),
    r.exited,
  ]);
  return { code, stdout, stderr };
}

/** IDs of the node's containers in containerd's CRI namespace (k8s.io): sandboxes and containers. */
export async function containers(cluster: TestCluster): Promise<string[]> {
  const r = await ctr(cluster, ["--namespace", "k8s.io", "containers", "list", "--quiet"]);
  if (r.code !== 0) throw new Error(`ctr containers list: ${r.stderr}`);
  return r.stdout.split("\n").filter(Boolean);
}

/** IDs of the node's live tasks (running processes of sandboxes and containers) in the CRI namespace. */
export async function tasks(cluster: TestCluster): Promise<string[]> {
  const r = await ctr(cluster, ["--namespace", "k8s.io", "tasks", "list", "--quiet"]);
  if (r.code !== 0) throw new Error(`ctr tasks list: ${r.stderr}`);
  return r.stdout.split("\n").filter(Boolean);
}

/**
 * Waits until none of `ids` has a task any more: the kubelet stopped them (CRI deletes a container's
 * task when it exits). Their records stay until the kubelet's container garbage collection, which
 * runs once a minute: snapshot.test.ts proves that once, at its end (untilNoContainers).
 */
export const untilStopped = (cluster: TestCluster, ids: string[], what: string) =>
  until(() => tasks(cluster), what, {
    accept: (live) => ids.every((id) => !live.includes(id)),
    ms: STUCK_STOP_MS,
    everyMs: 250,
  });

/** Waits until containerd holds no container at all: stopped, and collected by the kubelet. */
export const untilNoContainers = (cluster: TestCluster) =>
  until(() => containers(cluster), "no container left in containerd", {
    accept: (left) => left.length === 0,
    ms: CONTAINER_GC_MS,
    everyMs: 1000,
  });

/** containerd's containers of one pod (its sandbox and its containers), by the pod UID label the kubelet sets. */
export async function podContainerIds(cluster: TestCluster, podUid: string): Promise<string[]> {
  const r = await ctr(cluster, [
    "--namespace",
    "k8s.io",
    "containers",
    "list",
    "--quiet",
    `labels."io.kubernetes.pod.uid"==${podUid}`,
  ]);
  if (r.code !== 0) throw new Error(`ctr containers list: ${r.stderr}`);
  return r.stdout.split("\n").filter(Boolean);
}

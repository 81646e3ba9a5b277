/**
 * A GPU Operator install for the fake cluster, seeded through its store: GPU nodes with allocatable
 * nvidia.com/gpu, a ClusterPolicy whose status reports ready, and operand pods in gpu-operator that
 * the fake kubelet keeps Running (see operandRuntime). The broken variant fails every built-in check.
 */
import type { RunContext, RunResult } from "./controllers/runtime.ts";
import { node } from "./nodes.ts";
import type { Cluster } from "./server.ts";
import { type KObject, resource } from "./store.ts";

export const GPU_OPERATOR_NS = "gpu-operator";
export const OPERATOR_VERSION = "v25.10.1";
export const OLD_OPERATOR_VERSION = "v23.9.0";
/** Operand images whose container exits 1 at once (a crashing operand). */
export const CRASHING_TAG = "crash";
/** Images whose container never ends on its own (a hung validator). */
export const HANGING_TAG = "hang";

export interface GpuOperatorOptions {
  /** Default: ready. */
  broken?: boolean;
}

/** The nodes a validation cluster starts with: two 8-GPU nodes and a CPU node. */
export function gpuClusterNodes(): { resource: string; object: KObject }[] {
  return [node("gpu-node-1", { gpus: 8 }), node("gpu-node-2", { gpus: 8 }), node("cpu-node-1")].map(
    (object) => ({
      resource: "nodes",
      object,
    }),
  );
}

/**
 * The container runtime for images without an executable: operands run until their pod is deleted or
 * the cluster stops, as a DaemonSet's pods do; a `:crash` image exits 1.
 */
export function operandRuntime(ctx: RunContext): Promise<RunResult> {
  if (ctx.container.image?.endsWith(`:${CRASHING_TAG}`))
    return Promise.resolve({ exitCode: 1, message: "driver failed to load" });
  const runs =
    ctx.pod.metadata?.namespace === GPU_OPERATOR_NS || ctx.container.image?.endsWith(`:${HANGING_TAG}`);
  if (!runs) return Promise.resolve({ exitCode: 0 });
  return new Promise((resolve) => {
    if (ctx.signal.aborted) return resolve({ exitCode: 0 });
    ctx.signal.addEventListener("abort", () => resolve({ exitCode: 143 }), { once: true });
  });
}

function operandPod(name: string, nodeName: string, image: string, labels: Record<string, string>): KObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: GPU_OPERATOR_NS, labels },
    spec: { nodeName, restartPolicy: "Never", containers: [{ name: "main", image }] },
  };
}

function operands(broken: boolean): KObject[] {
  const version = broken ? OLD_OPERATOR_VERSION : OPERATOR_VERSION;
  const driverTag = broken ? CRASHING_TAG : "570.124.06-ubuntu24.04";
  return [
    operandPod("gpu-operator-6c8f9d7b5-x2k4q", "cpu-node-1", `nvcr.io/nvidia/gpu-operator:${version}`, {
      app: "gpu-operator",
      "app.kubernetes.io/name": "gpu-operator",
    }),
    ...["gpu-node-1", "gpu-node-2"].flatMap((n, i) => [
      operandPod(`nvidia-driver-daemonset-${i}`, n, `nvcr.io/nvidia/driver:${driverTag}`, {
        app: "nvidia-driver-daemonset",
      }),
      operandPod(`nvidia-device-plugin-daemonset-${i}`, n, "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", {
        app: "nvidia-device-plugin-daemonset",
      }),
      operandPod(
        `nvidia-container-toolkit-daemonset-${i}`,
        n,
        "nvcr.io/nvidia/k8s/container-toolkit:v1.17.4",
        {
          app: "nvidia-container-toolkit-daemonset",
        },
      ),
    ]),
  ];
}

/** Resolves once `cond` holds, re-checked on every committed store change. */
function until(cluster: Cluster, cond: () => boolean): Promise<void> {
  if (cond()) return Promise.resolve();
  return new Promise((resolve) => {
    const stop = cluster.store.subscribe(() => {
      if (!cond()) return;
      stop();
      resolve();
    });
  });
}

/**
 * Installs the operator into a running cluster (started with operandRuntime as the kubelet fallback)
 * and waits until every operand pod has reached its final phase: Running, or Failed when broken.
 */
export async function installGpuOperator(cluster: Cluster, options: GpuOperatorOptions = {}): Promise<void> {
  const broken = Boolean(options.broken);
  const { store } = cluster;
  if (!store.find(resource("namespaces"), undefined, GPU_OPERATOR_NS))
    store.create(resource("namespaces"), {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: GPU_OPERATOR_NS },
    });
  const cp = resource("clusterpolicies");
  store.create(cp, {
    apiVersion: "nvidia.com/v1",
    kind: "ClusterPolicy",
    metadata: { name: "cluster-policy" },
    spec: { driver: { enabled: true }, devicePlugin: { enabled: true }, toolkit: { enabled: true } },
  });
  store.mutate(
    cp,
    undefined,
    "cluster-policy",
    (o) => ({ ...o, status: { state: broken ? "notReady" : "ready", namespace: GPU_OPERATOR_NS } }),
    {
      subresource: "status",
    },
  );
  if (broken) {
    // A GPU node whose device plugin never registered: labelled, but nothing allocatable.
    store.mutate(
      resource("nodes"),
      undefined,
      "gpu-node-2",
      (o) => {
        const status = o.status as { allocatable: Record<string, string> };
        return { ...o, status: { ...status, allocatable: { ...status.allocatable, "nvidia.com/gpu": "0" } } };
      },
      { subresource: "status" },
    );
  }
  const pods = operands(broken);
  for (const p of pods) store.create(resource("pods"), p);
  const want = (p: KObject) =>
    String((p.spec as { containers: { image: string }[] }).containers[0]?.image).endsWith(`:${CRASHING_TAG}`)
      ? "Failed"
      : "Running";
  await until(cluster, () =>
    pods.every((p) => {
      const live = store.find(resource("pods"), GPU_OPERATOR_NS, p.metadata.name ?? "");
      return (live?.status as { phase?: string } | undefined)?.phase === want(p);
    }),
  );
}

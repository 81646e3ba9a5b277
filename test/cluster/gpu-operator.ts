/**
 * A GPU Operator install for a test cluster of either backend (testbed.ts), written as admin through
 * its store: GPU nodes with allocatable nvidia.com/gpu, a ClusterPolicy whose status reports ready, and
 * operand pods in gpu-operator bound to their nodes by spec.nodeName, which the kubelet of either
 * backend keeps Running (see operandRuntime). On the real backend the ClusterPolicy is a custom resource
 * of the CRD real/cluster.ts installs, and its status goes through the status subresource there too.
 * The broken variant fails every built-in check.
 */

import { untilStore } from "../support/until.ts";
import type { RunContext, RunResult } from "./controllers/runtime.ts";
import { node } from "./nodes.ts";
import type { KObject } from "./objects.ts";
import { resource } from "./resources.ts";
import type { TestCluster } from "./testbed.ts";

export const GPU_OPERATOR_NS = "gpu-operator";
export const OPERATOR_VERSION = "v25.10.1";
export const OLD_OPERATOR_VERSION = "v23.9.0";
/** Operand images whose container exits 1 at once (a crashing operand). */
export const CRASHING_TAG = "crash";
/** Images whose container never ends on its own (a hung validator). */
export const HANGING_TAG = "hang";
/** The GPU node whose device plugin never registered in the broken variant. */
export const UNREGISTERED_GPU_NODE = "gpu-node-2";

export interface GpuOperatorOptions {
  /** Default: ready. */
  broken?: boolean;
}

/**
 * The nodes a validation cluster starts with: two 8-GPU nodes and a CPU node. Broken: gpu-node-2's
 * device plugin never registered (labelled, 8 GPUs of capacity, none allocatable). The node starts that
 * way rather than being patched later: on the real backend our kubelet owns each Node's status and
 * would write an admin's patch of it back.
 */
export function gpuClusterNodes(options: GpuOperatorOptions = {}): { resource: string; object: KObject }[] {
  const nodes = [node("gpu-node-1", { gpus: 8 }), node("gpu-node-2", { gpus: 8 }), node("cpu-node-1")];
  if (options.broken) {
    const status = nodes[1]!.status as { allocatable: Record<string, string> };
    status.allocatable["nvidia.com/gpu"] = "0";
  }
  return nodes.map((object) => ({ resource: "nodes", object }));
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

/**
 * Installs the operator into a running cluster (started with operandRuntime as the kubelet's fallback
 * and, for the broken variant, with gpuClusterNodes({ broken: true })) and waits until every operand
 * pod has reached its final phase: Running, or Failed when broken.
 */
export async function installGpuOperator(
  cluster: TestCluster,
  options: GpuOperatorOptions = {},
): Promise<void> {
  const broken = Boolean(options.broken);
  const { store } = cluster;
  if (broken) {
    const gpus = (
      store.find(resource("nodes"), undefined, UNREGISTERED_GPU_NODE)?.status as
        | { allocatable?: Record<string, string> }
        | undefined
    )?.allocatable?.["nvidia.com/gpu"];
    if (gpus !== "0")
      throw new Error(
        `the broken GPU Operator needs ${UNREGISTERED_GPU_NODE} started with 0 allocatable GPUs: gpuClusterNodes({ broken: true })`,
      );
  }
  if (!store.find(resource("namespaces"), undefined, GPU_OPERATOR_NS))
    await store.create(resource("namespaces"), {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: GPU_OPERATOR_NS },
    });
  const cp = resource("clusterpolicies");
  await store.create(cp, {
    apiVersion: "nvidia.com/v1",
    kind: "ClusterPolicy",
    metadata: { name: "cluster-policy" },
    spec: { driver: { enabled: true }, devicePlugin: { enabled: true }, toolkit: { enabled: true } },
  });
  await store.mutate(
    cp,
    undefined,
    "cluster-policy",
    (o) => ({ ...o, status: { state: broken ? "notReady" : "ready", namespace: GPU_OPERATOR_NS } }),
    { subresource: "status" },
  );
  // The ServiceAccount admission plugin refuses pods until the namespace's `default` ServiceAccount
  // exists; the real serviceaccount controller creates it a moment after the namespace.
  await untilStore(
    cluster,
    () => store.find(resource("serviceaccounts"), GPU_OPERATOR_NS, "default") !== undefined,
    `the default ServiceAccount of ${GPU_OPERATOR_NS}`,
  );
  const pods = operands(broken);
  for (const p of pods) await store.create(resource("pods"), p);
  const want = (p: KObject) =>
    String((p.spec as { containers: { image: string }[] }).containers[0]?.image).endsWith(`:${CRASHING_TAG}`)
      ? "Failed"
      : "Running";
  const phase = (p: KObject) =>
    (
      store.find(resource("pods"), GPU_OPERATOR_NS, p.metadata.name ?? "")?.status as
        | { phase?: string }
        | undefined
    )?.phase;
  await untilStore(
    cluster,
    () => pods.every((p) => phase(p) === want(p)),
    () =>
      `every operand pod in its final phase; now: ${pods.map((p) => `${p.metadata.name}=${phase(p)}`).join(", ")}`,
    90_000,
  );
}

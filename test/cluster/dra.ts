/**
 * A stand-in for NVIDIA's DRA driver (k8s-dra-driver-gpu) on the real control plane (testbed.ts, real
 * backend), built from real Kubernetes parts: a DeviceClass `gpu.nvidia.com`, one ResourceSlice per GPU
 * node published as the driver's kubelet plugin publishes it, and the driver's own objects — Namespace
 * `nvidia-dra-driver`, the controller Deployment and the kubelet-plugin DaemonSet — whose pods the real
 * deployment, replicaset and daemonset controllers create, the real scheduler places and the process
 * kubelet runs (draOperandRuntime). With it the real kube-scheduler allocates real `resource.k8s.io/v1`
 * ResourceClaims from those slices, the resourceclaim controller deallocates them when their pod is
 * done, and the process kubelet gives a container that holds an allocated GPU its `/dev/nvidia<i>`
 * device nodes (real/kubelet-dra.ts) while a pod without a claim sees none.
 *
 *   const cluster = useCluster("real", draClusterOptions({ images: { [PROBE]: "/bin/sh" } }));
 *   beforeAll(() => installDraDriver(cluster()));                        // 2 GPUs on gpu-node-1
 *   installDraDriver(cluster(), { state: "pluginNotReady" });            // what a check must catch
 *   cluster().store.find(DRA_RESOURCES.resourceClaims, ns, name)         // mirrored once installed
 *
 * The fake backend serves no resource.k8s.io group: installDraDriver refuses it. Where the stand-in
 * simplifies the real driver: test/cluster/README.md, "The DRA driver stand-in".
 */
import { createHash } from "node:crypto";
import { untilStore } from "../support/until.ts";
import { type ProcessRuntimeOptions, processRuntime } from "./controllers/process-runtime.ts";
import type { RunContext, RunFunction, RunResult } from "./controllers/runtime.ts";
import { HANGING_TAG, operandRuntime } from "./gpu-operator.ts";
import { node } from "./nodes.ts";
import type { KObject } from "./objects.ts";
import { NVIDIA_GPU_DRIVER } from "./real/kubelet-dra.ts";
import { MirrorStore } from "./real/mirror.ts";
import { type ResourceType, resource } from "./resources.ts";
import type { TestCluster, TestClusterOptions } from "./testbed.ts";

export { NVIDIA_GPU_DRIVER } from "./real/kubelet-dra.ts";
export const GPU_DEVICE_CLASS = "gpu.nvidia.com";
export const DRA_DRIVER_NS = "nvidia-dra-driver";
export const DRA_CONTROLLER = "nvidia-dra-driver-gpu-controller";
export const DRA_KUBELET_PLUGIN = "nvidia-dra-driver-gpu-kubelet-plugin";
export const DRA_DRIVER_IMAGE = "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.8.0";
/** The init container image that never finishes (waiting for a GPU driver that never comes). */
export const DRA_WAITING_IMAGE = `nvcr.io/nvidia/k8s-dra-driver-gpu:${HANGING_TAG}`;
export const DRA_GPU_PRODUCT = "NVIDIA H100 80GB HBM3";
/** Published devices per GPU node when the Node has no `nvidia.com/gpu` capacity. */
export const DEFAULT_GPUS_PER_NODE = 8;

const resourceType = (
  group: string,
  plural: string,
  kind: string,
  namespaced: boolean,
  subresources: string[] = [],
): ResourceType => ({
  group,
  version: "v1",
  plural,
  singular: kind.toLowerCase(),
  kind,
  namespaced,
  shortNames: [],
  subresources,
  verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
  stored: true,
});

/**
 * The kinds of the stand-in, for `cluster.store` (find, list, create, mutate, delete; untilStore). They
 * are not in the fake's registry (resources.ts): the real backend's mirror watches them once
 * installDraDriver has run.
 */
export const DRA_RESOURCES = {
  deviceClasses: resourceType("resource.k8s.io", "deviceclasses", "DeviceClass", false),
  resourceSlices: resourceType("resource.k8s.io", "resourceslices", "ResourceSlice", false),
  resourceClaims: resourceType("resource.k8s.io", "resourceclaims", "ResourceClaim", true, ["status"]),
  resourceClaimTemplates: resourceType(
    "resource.k8s.io",
    "resourceclaimtemplates",
    "ResourceClaimTemplate",
    true,
  ),
  deployments: resourceType("apps", "deployments", "Deployment", true, ["status", "scale"]),
  daemonSets: resourceType("apps", "daemonsets", "DaemonSet", true, ["status"]),
} as const;

/**
 * healthy: everything a check reads is in order. The broken states, each what a DRA check must catch:
 * noResourceSlices (the driver runs, no node has published its GPUs: a claim pod is Unschedulable);
 * controllerScaledToZero (the controller Deployment has 0 replicas); controllerUnavailable (1 replica
 * whose pod never becomes ready: its init container waits forever); pluginNotReady (the kubelet-plugin
 * DaemonSet's pods never become ready, the same way: numberReady 0); absent (nothing installed: no
 * namespace, no DeviceClass, no slices — a cluster without the driver, the API still served).
 */
export type DraDriverState =
  | "healthy"
  | "noResourceSlices"
  | "controllerScaledToZero"
  | "controllerUnavailable"
  | "pluginNotReady"
  | "absent";

export interface DraDriverOptions {
  /** Default: healthy. */
  state?: DraDriverState;
  /** The GPU nodes (default: every Node labelled nvidia.com/gpu.present=true). */
  nodes?: string[];
  /** Devices gpu-0 … gpu-<n-1> per GPU node (default: the Node's nvidia.com/gpu capacity, else 8). */
  gpusPerNode?: number;
  /** Bound of the wait for the driver's pods to settle (default 90 s). */
  timeoutMs?: number;
}

export interface DraClusterOptions {
  /** Default: gpu-node-1 with 2 GPUs (labelled nvidia.com/gpu.present=true) and cpu-node-1. */
  nodes?: KObject[];
  /** Image → local executable for the pods (processRuntime's `images`). */
  images?: ProcessRuntimeOptions["images"];
  /** Runs the other images without an executable (default: gpu-operator.ts operandRuntime). */
  fallback?: RunFunction;
  /** Extra processRuntime options (baseEnv, kubeconfigForServiceAccount, pull, …). */
  runtime?: Omit<ProcessRuntimeOptions, "images" | "fallback">;
}

/**
 * Start options of a real cluster for the stand-in: its nodes, and a process runtime whose fallback
 * keeps the driver's pods running (draOperandRuntime). Spread more options over it as needed.
 */
export function draClusterOptions(options: DraClusterOptions = {}): TestClusterOptions {
  return {
    nodes: options.nodes ?? [node("gpu-node-1", { gpus: 2 }), node("cpu-node-1")],
    runtime: () =>
      processRuntime({
        ...options.runtime,
        images: options.images ?? {},
        fallback: draOperandRuntime(options.fallback ?? operandRuntime),
      }),
  };
}

const untilAborted = (signal: AbortSignal, code: number): Promise<RunResult> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve({ exitCode: code });
    signal.addEventListener("abort", () => resolve({ exitCode: code }), { once: true });
  });

/**
 * The container runtime of the driver's pods, for the process runtime's `fallback`: in
 * `nvidia-dra-driver`, an init container finishes at once (exit 0) unless its image ends with `:hang`
 * (DRA_WAITING_IMAGE: it waits until the pod is deleted, so the pod never becomes ready), and every
 * other container runs until its pod is deleted, as a controller's and a DaemonSet's do. Other pods go
 * to `next` (default: exit 0 at once).
 */
export function draOperandRuntime(next?: RunFunction): RunFunction {
  return (ctx: RunContext) => {
    if (ctx.pod.metadata?.namespace !== DRA_DRIVER_NS)
      return next ? next(ctx) : Promise.resolve({ exitCode: 0 });
    const init = (ctx.pod.spec?.initContainers ?? []).some(
      (c: { name: string }) => c.name === ctx.container.name,
    );
    if (init && !ctx.container.image?.endsWith(`:${HANGING_TAG}`)) return Promise.resolve({ exitCode: 0 });
    return untilAborted(ctx.signal, 143);
  };
}

/** A GPU's UUID, stable per node and index (the form nvidia-smi prints). */
export function gpuUuid(nodeName: string, index: number): string {
  const h = createHash("sha256").update(`${nodeName}/${index}`).digest("hex");
  return `GPU-${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The DeviceClass of NVIDIA's driver: every device its driver publishes. */
export function gpuDeviceClass(): KObject {
  return {
    apiVersion: "resource.k8s.io/v1",
    kind: "DeviceClass",
    metadata: { name: GPU_DEVICE_CLASS },
    spec: { selectors: [{ cel: { expression: `device.driver == "${NVIDIA_GPU_DRIVER}"` } }] },
  };
}

/**
 * The ResourceSlice a kubelet plugin publishes for its node: one pool named after the node, devices
 * gpu-0 … gpu-<gpus-1> with the attributes NVIDIA's driver gives a full GPU; owned by the Node, as the
 * plugin's are (gone with the Node).
 */
export function gpuResourceSlice(nodeName: string, gpus: number, nodeUid?: string): KObject {
  return {
    apiVersion: "resource.k8s.io/v1",
    kind: "ResourceSlice",
    metadata: {
      name: `${nodeName}-${NVIDIA_GPU_DRIVER}`,
      ...(nodeUid
        ? {
            ownerReferences: [
              { apiVersion: "v1", kind: "Node", name: nodeName, uid: nodeUid, controller: true },
            ],
          }
        : {}),
    },
    spec: {
      driver: NVIDIA_GPU_DRIVER,
      nodeName,
      pool: { name: nodeName, generation: 1, resourceSliceCount: 1 },
      devices: Array.from({ length: gpus }, (_, i) => ({
        name: `gpu-${i}`,
        attributes: {
          type: { string: "gpu" },
          index: { int: i },
          minor: { int: i },
          uuid: { string: gpuUuid(nodeName, i) },
          productName: { string: DRA_GPU_PRODUCT },
          brand: { string: "Nvidia" },
          architecture: { string: "Hopper" },
          cudaComputeCapability: { version: "9.0.0" },
          driverVersion: { version: "570.124.6" },
          cudaDriverVersion: { version: "12.8.0" },
        },
        capacity: { memory: { value: "81559Mi" } },
      })),
    },
  };
}

/**
 * A ResourceClaim for `count` GPUs of the class (ExactCount), its one request named `gpu` — the claim
 * the DRA checks create.
 */
export function gpuClaim(namespace: string, name: string, count = 1): KObject {
  return {
    apiVersion: "resource.k8s.io/v1",
    kind: "ResourceClaim",
    metadata: { name, namespace },
    spec: {
      devices: {
        requests: [
          {
            name: "gpu",
            exactly: { deviceClassName: GPU_DEVICE_CLASS, allocationMode: "ExactCount", count },
          },
        ],
      },
    },
  };
}

const LABELS = { "app.kubernetes.io/name": "nvidia-dra-driver-gpu" };

function operandTemplate(component: string, init: string | undefined, main: string[]): KObject {
  const labels = { ...LABELS, "app.kubernetes.io/component": component };
  return {
    metadata: { labels },
    spec: {
      automountServiceAccountToken: false,
      ...(component === "kubelet-plugin" ? { nodeSelector: { "nvidia.com/gpu.present": "true" } } : {}),
      tolerations: [{ operator: "Exists" }],
      ...(init ? { initContainers: [{ name: "init-container", image: init }] } : {}),
      containers: main.map((name) => ({ name, image: DRA_DRIVER_IMAGE })),
    },
  };
}

function controllerDeployment(state: DraDriverState): KObject {
  const labels = { ...LABELS, "app.kubernetes.io/component": "controller" };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: DRA_CONTROLLER, namespace: DRA_DRIVER_NS, labels },
    spec: {
      replicas: state === "controllerScaledToZero" ? 0 : 1,
      selector: { matchLabels: labels },
      template: operandTemplate(
        "controller",
        state === "controllerUnavailable" ? DRA_WAITING_IMAGE : undefined,
        ["compute-domain"],
      ),
    },
  };
}

function kubeletPluginDaemonSet(state: DraDriverState): KObject {
  const labels = { ...LABELS, "app.kubernetes.io/component": "kubelet-plugin" };
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: DRA_KUBELET_PLUGIN, namespace: DRA_DRIVER_NS, labels },
    spec: {
      selector: { matchLabels: labels },
      template: operandTemplate(
        "kubelet-plugin",
        state === "pluginNotReady" ? DRA_WAITING_IMAGE : DRA_DRIVER_IMAGE,
        ["compute-domains", "gpus"],
      ),
    },
  };
}

/** The Nodes labelled nvidia.com/gpu.present=true, by name. */
export function gpuNodeNames(cluster: TestCluster): string[] {
  return cluster.store
    .list(resource("nodes"), { labelSelector: "nvidia.com/gpu.present=true" })
    .items.map((n) => n.metadata.name!);
}

/**
 * Installs the stand-in into a running real cluster (started with draClusterOptions, or any runtime
 * whose fallback is draOperandRuntime) and returns once its objects have settled in the state asked
 * for: healthy — the controller available (availableReplicas 1) and the plugin ready on every GPU node
 * (numberReady = desiredNumberScheduled ≥ 1), one ResourceSlice per GPU node. Whatever the state, the
 * DRA kinds are mirrored into `cluster.store` (DRA_RESOURCES) before it returns. Once per cluster.
 */
export async function installDraDriver(cluster: TestCluster, options: DraDriverOptions = {}): Promise<void> {
  if (cluster.backend !== "real" || !(cluster.store instanceof MirrorStore))
    throw new Error(
      "the DRA driver stand-in needs the real control plane: the fake apiserver serves no resource.k8s.io",
    );
  const store = cluster.store;
  for (const r of Object.values(DRA_RESOURCES)) await store.add(r);
  const state = options.state ?? "healthy";
  if (state === "absent") return;
  const bound = options.timeoutMs ?? 90_000;
  // The plugin DaemonSet runs where nvidia.com/gpu.present=true, as the real plugin's node affinity
  // says; the slices go to those nodes unless `nodes` names others.
  const pluginNodes = gpuNodeNames(cluster).length;
  if (pluginNodes === 0)
    throw new Error(
      "the DRA kubelet plugin runs on Nodes labelled nvidia.com/gpu.present=true (node(name, { gpus })): none is",
    );
  const nodes = options.nodes ?? gpuNodeNames(cluster);

  await store.create(DRA_RESOURCES.deviceClasses, gpuDeviceClass());
  if (state !== "noResourceSlices")
    for (const n of nodes) {
      const o = store.find(resource("nodes"), undefined, n);
      if (!o) throw new Error(`no Node ${n}`);
      const capacity = Number(o.status?.capacity?.["nvidia.com/gpu"] ?? 0);
      const gpus = options.gpusPerNode ?? (capacity > 0 ? capacity : DEFAULT_GPUS_PER_NODE);
      await store.create(DRA_RESOURCES.resourceSlices, gpuResourceSlice(n, gpus, o.metadata.uid));
    }

  if (!store.find(resource("namespaces"), undefined, DRA_DRIVER_NS))
    await store.create(resource("namespaces"), {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: DRA_DRIVER_NS },
    });
  // The ReplicaSet and DaemonSet controllers would retry a pod the ServiceAccount admission refused
  // (no `default` ServiceAccount yet), with back-off: create them once it exists.
  await untilStore(
    cluster,
    () => store.find(resource("serviceaccounts"), DRA_DRIVER_NS, "default") !== undefined,
    `the default ServiceAccount of ${DRA_DRIVER_NS}`,
  );
  await store.create(DRA_RESOURCES.deployments, controllerDeployment(state));
  await store.create(DRA_RESOURCES.daemonSets, kubeletPluginDaemonSet(state));

  const { deployments, daemonSets } = DRA_RESOURCES;
  const status = (r: ResourceType, name: string) => {
    const o = store.find(r, DRA_DRIVER_NS, name);
    const settled = o && (o.status?.observedGeneration ?? 0) >= (o.metadata.generation ?? 1);
    return settled ? (o.status ?? {}) : undefined;
  };
  /** The driver's pods whose init container is running (waiting for ever) and none ready. */
  const waiting = (component: string) => {
    const pods = store.list(resource("pods"), {
      namespace: DRA_DRIVER_NS,
      labelSelector: `app.kubernetes.io/component=${component}`,
    }).items;
    return (
      pods.length > 0 &&
      pods.every((p) => (p.status?.initContainerStatuses ?? []).some((c: any) => c.state?.running))
    );
  };
  const controllerSettled = () => {
    const s = status(deployments, DRA_CONTROLLER);
    if (!s) return false;
    if (state === "controllerScaledToZero") return (s.replicas ?? 0) === 0;
    if (state === "controllerUnavailable") return (s.availableReplicas ?? 0) === 0 && waiting("controller");
    return (s.availableReplicas ?? 0) >= 1;
  };
  const pluginSettled = () => {
    const s = status(daemonSets, DRA_KUBELET_PLUGIN);
    if (!s || (s.desiredNumberScheduled ?? 0) !== pluginNodes) return false;
    if (state === "pluginNotReady") return (s.numberReady ?? 0) === 0 && waiting("kubelet-plugin");
    return s.numberReady === s.desiredNumberScheduled;
  };
  await untilStore(
    cluster,
    () => controllerSettled() && pluginSettled(),
    () =>
      `the DRA driver stand-in ${state}; controller status ${JSON.stringify(store.find(deployments, DRA_DRIVER_NS, DRA_CONTROLLER)?.status)}, plugin status ${JSON.stringify(store.find(daemonSets, DRA_DRIVER_NS, DRA_KUBELET_PLUGIN)?.status)}`,
    bound,
  );
}

/** Scales an installed driver's controller Deployment to 0 and resolves once its status says so. */
export async function scaleDraControllerToZero(cluster: TestCluster): Promise<void> {
  const { deployments } = DRA_RESOURCES;
  await cluster.store.mutate(deployments, DRA_DRIVER_NS, DRA_CONTROLLER, (d) => ({
    ...d,
    spec: { ...d.spec, replicas: 0 },
  }));
  await untilStore(
    cluster,
    () => {
      const d = cluster.store.find(deployments, DRA_DRIVER_NS, DRA_CONTROLLER);
      return (
        (d?.status?.observedGeneration ?? 0) >= (d?.metadata.generation ?? 1) && !d?.status?.availableReplicas
      );
    },
    "the DRA controller scaled to zero",
  );
}

/** Node objects for fake clusters: GPU nodes (optionally tainted) and CPU nodes, Ready. */
import type { KObject } from "./objects.ts";

export interface NodeOptions {
  gpus?: number;
  labels?: Record<string, string>;
  taints?: { key: string; value?: string; effect: "NoSchedule" | "PreferNoSchedule" | "NoExecute" }[];
  cpu?: string;
  memory?: string;
}

export function node(name: string, opts: NodeOptions = {}): KObject {
  const resources: Record<string, string> = {
    cpu: opts.cpu ?? "16",
    memory: opts.memory ?? "64Gi",
    pods: "110",
    "ephemeral-storage": "100Gi",
  };
  if (opts.gpus) resources["nvidia.com/gpu"] = String(opts.gpus);
  const labels: Record<string, string> = {
    "kubernetes.io/hostname": name,
    "kubernetes.io/os": "linux",
    "kubernetes.io/arch": "amd64",
    "beta.kubernetes.io/os": "linux",
    "beta.kubernetes.io/arch": "amd64",
    ...(opts.gpus ? { "nvidia.com/gpu.present": "true" } : {}),
    ...opts.labels,
  };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels },
    spec: opts.taints ? { taints: opts.taints } : {},
    status: {
      capacity: resources,
      allocatable: { ...resources },
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "KubeletReady",
          message: "kubelet is posting ready status",
          lastHeartbeatTime: `${new Date().toISOString().slice(0, 19)}Z`,
          lastTransitionTime: `${new Date().toISOString().slice(0, 19)}Z`,
        },
      ],
      addresses: [
        { type: "InternalIP", address: "10.0.0.1" },
        { type: "Hostname", address: name },
      ],
      nodeInfo: {
        architecture: "amd64",
        operatingSystem: "linux",
        osImage: "aicr fake node",
        kernelVersion: "6.1.0",
        kubeletVersion: "v1.32.0-aicr-fake",
        kubeProxyVersion: "v1.32.0-aicr-fake",
        containerRuntimeVersion: "fake://1.0.0",
        machineID: "",
        systemUUID: "",
        bootID: "",
      },
    },
  };
}

/** The standalone cluster's nodes: a GPU node, a GPU node tainted for GPU work only, a CPU node. */
export function demoNodes(): { resource: string; object: KObject }[] {
  return [
    node("gpu-node-1", { gpus: 8 }),
    node("gpu-node-2", {
      gpus: 8,
      taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }],
    }),
    node("cpu-node-1"),
  ].map((object) => ({ resource: "nodes", object }));
}

/**
 * A Karpenter stand-in for a real test cluster: the karpenter.sh/v1 NodePool CRD and pools whose limits
 * name nvidia.com/gpu, a Deployment labelled app.kubernetes.io/name=karpenter (available), and a small
 * provisioner in the test process: while a pod whose nodeSelector names a pool
 * (karpenter.sh/nodepool=<pool>) is Pending as Unschedulable, it registers one more process-kubelet Node
 * for that pool (labelled with it, GPUs allocatable, tainted nvidia.com/gpu=present:NoSchedule as GPU
 * pools are), one at a time, within the pool's GPU limit.
 *
 *   const karpenter = await installKarpenter(cluster, { pools: [{ name: "gpu-pool" }] });
 *   karpenter.broken = true;        // the provisioner does nothing (pods stay Pending)
 *   karpenter.added                 // the Nodes it registered
 *   await karpenter.stop();
 *
 * Absent Karpenter is simply not installing it (with Nodes that carry no providerID).
 */
import { node } from "../nodes.ts";
import { looseCrd } from "../real/crds.ts";
import type { TestCluster } from "../testbed.ts";
import { adminClient, ensure } from "./_host.ts";
import { standinApi, standinDeployment } from "./_standin-api.ts";

export const NODEPOOL_LABEL = "karpenter.sh/nodepool";
export const KARPENTER_NS = "karpenter";

export const NODEPOOL_CRD = looseCrd({
  group: "karpenter.sh",
  version: "v1",
  plural: "nodepools",
  kind: "NodePool",
  scope: "Cluster",
});

export interface PoolSpec {
  name: string;
  /** Default "16"; undefined with `gpu: false`: a CPU-only pool (its limits name no GPU). */
  gpuLimit?: string;
  gpu?: boolean;
  /** GPUs of each node it adds (default 8). */
  nodeGpus?: number;
}

export interface KarpenterOptions {
  pools: PoolSpec[];
  /** Default false: the provisioner adds nodes. */
  broken?: boolean;
  /** The Deployment's replicas (default 1; 0: installed but never available). */
  replicas?: number;
}

export interface KarpenterStandin {
  broken: boolean;
  /** Names of the Nodes the provisioner registered, in order. */
  readonly added: string[];
  stop(): Promise<void>;
}

interface PendingPod {
  metadata?: { namespace?: string; name?: string };
  spec?: { nodeSelector?: Record<string, string>; nodeName?: string };
  status?: { phase?: string; conditions?: { type?: string; status?: string; reason?: string }[] };
}

interface NodeLike {
  metadata?: { name?: string };
  spec?: { taints?: { key: string }[] };
  status?: { conditions?: { type?: string; status?: string }[] };
}

/** Installs the stand-in (CRD, pools, Deployment) and starts its provisioner. */
export async function installKarpenter(cluster: TestCluster, o: KarpenterOptions): Promise<KarpenterStandin> {
  const addNode = cluster.addNode;
  if (!addNode)
    throw new Error("the Karpenter stand-in needs a cluster that can add nodes (the real backend's kubelet)");
  const client = adminClient(cluster);
  await standinApi(cluster).installCrd(NODEPOOL_CRD);
  for (const p of o.pools)
    await ensure(client, {
      apiVersion: "karpenter.sh/v1",
      kind: "NodePool",
      metadata: { name: p.name },
      spec: {
        template: {
          metadata: { labels: { "nvidia.com/gpu.present": p.gpu === false ? "false" : "true" } },
          spec: { nodeClassRef: { group: "karpenter.k8s.aws", kind: "EC2NodeClass", name: "default" } },
        },
        limits: p.gpu === false ? { cpu: "64" } : { cpu: "256", "nvidia.com/gpu": p.gpuLimit ?? "16" },
      },
    });
  await standinDeployment(client, {
    namespace: KARPENTER_NS,
    name: "karpenter",
    labels: { "app.kubernetes.io/name": "karpenter", "app.kubernetes.io/instance": "karpenter" },
    image: "public.ecr.aws/karpenter/controller:1.3.3",
    ...(o.replicas !== undefined ? { replicas: o.replicas } : {}),
  });

  const state = { broken: o.broken ?? false };
  const added: string[] = [];
  const stop = new AbortController();
  /** A node registered and not yet Ready and untainted: Karpenter waits for it before adding another. */
  let inFlight: string | undefined;

  const usable = async (name: string): Promise<boolean> => {
    const n = await client.get<NodeLike>({ apiVersion: "v1", kind: "Node", name });
    const ready = n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
    return Boolean(ready) && !(n.spec?.taints ?? []).some((t) => t.key.startsWith("node.kubernetes.io/"));
  };

  const provision = async () => {
    if (state.broken) return;
    if (inFlight && !(await usable(inFlight))) return;
    inFlight = undefined;
    const pending = await client.list<PendingPod>("v1", "Pod", { fieldSelector: "status.phase=Pending" });
    for (const pod of pending.items) {
      const poolName = pod.spec?.nodeSelector?.[NODEPOOL_LABEL];
      const pool = o.pools.find((p) => p.name === poolName);
      const unschedulable = pod.status?.conditions?.some(
        (c) => c.type === "PodScheduled" && c.status === "False" && c.reason === "Unschedulable",
      );
      if (!pool || pool.gpu === false || pod.spec?.nodeName || !unschedulable) continue;
      const gpus = pool.nodeGpus ?? 8;
      const nodes = (await client.list("v1", "Node", { labelSelector: `${NODEPOOL_LABEL}=${pool.name}` }))
        .items;
      if ((nodes.length + 1) * gpus > Number(pool.gpuLimit ?? "16")) continue;
      const name = `${pool.name}-${(added.length + 1).toString().padStart(3, "0")}`;
      inFlight = name;
      added.push(name);
      await addNode(
        node(name, {
          gpus,
          labels: { [NODEPOOL_LABEL]: pool.name, "karpenter.sh/registered": "true" },
          taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }],
        }),
      );
      return;
    }
  };

  const loop = (async () => {
    while (!stop.signal.aborted) {
      await provision().catch((err) => {
        if (!stop.signal.aborted) console.error(`[karpenter stand-in] ${(err as Error).message}`);
      });
      await Bun.sleep(500);
    }
  })();

  return {
    get broken() {
      return state.broken;
    },
    set broken(v: boolean) {
      state.broken = v;
    },
    added,
    async stop() {
      stop.abort();
      await loop;
      client.close();
    },
  };
}

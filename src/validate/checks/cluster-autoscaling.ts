/**
 * cluster-autoscaling (CNCF cluster_autoscaling): GPU capacity grows on demand. With Karpenter, for each
 * NodePool whose limits name nvidia.com/gpu (in list order, the first success passes): a Deployment of
 * one-GPU pods pinned to the pool (this project's image, `aicr probe sleep 120`) and an HPA on the
 * external GPU power metric in the check's namespace; the HPA asks for more replicas, the pool gains a
 * node, and at least two of the pods run. Without Karpenter, the platform's own node-group autoscaler
 * by the first Node's providerID: EKS (aws://) or GKE (gce://), read only; any other platform skips.
 */
import type { ObjectRef } from "../../kube/client.ts";
import {
  type Created,
  createRecorded,
  deleteCreated,
  describeHpa,
  duration,
  HPA_INTENT_WAIT_MS,
  type HpaState,
  hpaWantsMore,
  POLL_MS,
  pollObject,
  powerHpa,
  refOf,
  sleepDeployment,
} from "./_autoscaling.ts";
import { errorText } from "./_read-outcome.ts";
import { pollFor } from "./_support.ts";
import { type CheckContext, type CheckRun, failed, passed, skipped, type Verdict } from "./context.ts";

export const KARPENTER_SELECTORS = ["app.kubernetes.io/name=karpenter", "app=karpenter"] as const;
export const GPU_RESOURCE = "nvidia.com/gpu";
export const NODEPOOL_LABEL = "karpenter.sh/nodepool";
export const GPU_NODE_SELECTOR = "nvidia.com/gpu.present=true";
/** The original's Karpenter node wait and pod-schedule wait. */
export const NODE_WAIT_MS = 180_000;
export const POD_WAIT_MS = 120_000;
export const MAX_REPLICAS = 4;
export const RUNNING_PODS = 2;
export const CLUSTER_AUTOSCALER_NAMES = [
  "cluster-autoscaler",
  "cluster-autoscaler-aws-cluster-autoscaler",
] as const;
export const CLUSTER_AUTOSCALER_NAMESPACES = ["kube-system", "cluster-autoscaler", "system"] as const;
export const AUTOSCALER_STATUS_CONFIGMAP = "cluster-autoscaler-status";
export const AUTOSCALER_EVENT_REASONS = [
  "NotTriggerScaleUp",
  "ScaledUpGroup",
  "ScaleDown",
  "TriggeredScaleUp",
] as const;
const STATUS_CHARS = 2000;
const MAX_EVENTS = 10;

interface DeploymentLike {
  metadata?: { name?: string; namespace?: string };
  spec?: { replicas?: number };
  status?: { availableReplicas?: number; replicas?: number };
}
interface NodePoolLike {
  metadata?: { name?: string };
  spec?: { limits?: Record<string, unknown> };
}
export interface NodeLike {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { providerID?: string };
}
interface PodLike {
  metadata?: { name?: string };
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    conditions?: { type?: string; status?: string; reason?: string; message?: string }[];
  };
}

const where = (d: DeploymentLike) => `${d.metadata?.namespace}/${d.metadata?.name}`;
const within = (ctx: Pick<CheckContext, "signal">, ms: number) =>
  ctx.signal.aborted ? "before the check's deadline ended" : `within ${duration(ms)}`;

/** Karpenter's Deployment is up: its replicas (default 1) above 0 and all of them available (pure). */
export function karpenterReady(d: DeploymentLike): string | undefined {
  const want = d.spec?.replicas ?? 1;
  const available = d.status?.availableReplicas ?? 0;
  if (want <= 0) return `Karpenter Deployment ${where(d)} is scaled to 0 replicas`;
  if (available < want)
    return `Karpenter Deployment ${where(d)} is not available: ${available} of ${want} replica(s) available`;
  return undefined;
}

/** The NodePools whose limits name nvidia.com/gpu, in list order (pure). */
export const gpuPools = (pools: readonly NodePoolLike[]): string[] =>
  pools
    .filter((p) => {
      const limits = p.spec?.limits;
      return limits !== null && typeof limits === "object" && Object.hasOwn(limits, GPU_RESOURCE);
    })
    .map((p) => p.metadata?.name ?? "")
    .filter(Boolean);

/** Pods Running or Succeeded (pure). */
export const podsRunning = (pods: readonly PodLike[]): number =>
  pods.filter((p) => p.status?.phase === "Running" || p.status?.phase === "Succeeded").length;

/** Why the pods that are not running wait, one line each, at most three (pure). */
export function pendingReasons(pods: readonly PodLike[]): string[] {
  return pods
    .filter((p) => p.status?.phase !== "Running" && p.status?.phase !== "Succeeded")
    .slice(0, 3)
    .map((p) => {
      const c = p.status?.conditions?.find((x) => x.type === "PodScheduled" && x.status === "False");
      return `pod ${p.metadata?.name}: ${p.status?.phase ?? "Unknown"}${c ? ` (${c.reason}: ${c.message ?? ""})` : ""}`;
    });
}

/** One NodePool's try: create, watch the HPA, the pool's nodes and the pods, delete. */
export async function tryPool(
  ctx: CheckContext,
  pool: string,
  index: number,
  steps: string[],
): Promise<{ ok: boolean; message: string }> {
  const name = ctx.name(index === 0 ? "cluster-auto-test" : `cluster-auto-test-${index + 1}`);
  const ns = ctx.testNamespace;
  const poolSelector = `${NODEPOOL_LABEL}=${pool}`;
  const started = ctx.now();
  const at = () => `[${pool} +${duration(ctx.now() - started)}]`;
  const poll = (maxMs: number) => ({ intervalMs: ctx.waitMs(POLL_MS), maxMs: ctx.waitMs(maxMs) });
  let baseline: number;
  try {
    baseline = (await ctx.client.list("v1", "Node", { labelSelector: poolSelector })).items.length;
  } catch (err) {
    return { ok: false, message: `NodePool ${pool}: cannot count its nodes: ${errorText(err)}` };
  }
  steps.push(`${at()} baseline: ${baseline} node(s) labelled ${poolSelector}`);
  const deployment = sleepDeployment(ctx, {
    name,
    container: "gpu-workload",
    seconds: 120,
    requests: { [GPU_RESOURCE]: "1" },
    limits: { [GPU_RESOURCE]: "1" },
    nodeSelector: { [NODEPOOL_LABEL]: pool },
    tolerations: [
      { key: GPU_RESOURCE, operator: "Equal", value: "present", effect: "NoSchedule" },
      { key: "kwok.x-k8s.io/node", operator: "Exists", effect: "NoSchedule" },
    ],
  });
  const hpa = powerHpa(ctx, { name, deployment: name, maxReplicas: MAX_REPLICAS, scaleDownAtOnce: false });
  const created: Created[] = [];
  try {
    try {
      await createRecorded(ctx.client, deployment, created);
      await createRecorded(ctx.client, hpa, created);
    } catch (err) {
      return {
        ok: false,
        message: `NodePool ${pool}: cannot create the test Deployment and HPA: ${errorText(err)}`,
      };
    }
    steps.push(`${at()} created Deployment and HPA ${name} in namespace ${ns}`);
    const intent = await pollObject<HpaState>(ctx, refOf(hpa), poll(HPA_INTENT_WAIT_MS), hpaWantsMore);
    steps.push(`${at()} HPA: ${describeHpa(intent.last)}`);
    if (!intent.ok)
      return {
        ok: false,
        message: `NodePool ${pool}: HPA ${ns}/${name} did not ask for more than 1 replica ${within(ctx, ctx.waitMs(HPA_INTENT_WAIT_MS))}: ${describeHpa(intent.last)}`,
      };
    let nodes = baseline;
    const grew = await pollFor(ctx, poll(NODE_WAIT_MS), async () => {
      try {
        nodes = (await ctx.client.list("v1", "Node", { labelSelector: poolSelector })).items.length;
      } catch {
        return undefined; // retried
      }
      return nodes > baseline ? true : undefined;
    }).catch(() => undefined);
    steps.push(`${at()} ${nodes} node(s) labelled ${poolSelector}`);
    if (!grew) {
      const pods = await listPods(ctx, name);
      return {
        ok: false,
        message: `NodePool ${pool}: no new node labelled ${poolSelector} ${within(ctx, ctx.waitMs(NODE_WAIT_MS))} (${nodes}, baseline ${baseline}): the autoscaler did not add GPU capacity for the pending pods${pods.length > 0 ? `; ${pendingReasons(pods).join("; ")}` : ""}`,
      };
    }
    let pods: PodLike[] = [];
    const running = await pollFor(ctx, poll(POD_WAIT_MS), async () => {
      pods = await listPods(ctx, name);
      return pods.length >= RUNNING_PODS && podsRunning(pods) >= RUNNING_PODS ? true : undefined;
    }).catch(() => undefined);
    steps.push(`${at()} ${podsRunning(pods)} of ${pods.length} test pod(s) Running or Succeeded`);
    if (!running)
      return {
        ok: false,
        message: `NodePool ${pool}: ${podsRunning(pods)} of ${pods.length} test pod(s) Running ${within(ctx, ctx.waitMs(POD_WAIT_MS))}, expected at least ${RUNNING_PODS}${pods.length > 0 ? `; ${pendingReasons(pods).join("; ")}` : ""}`,
      };
    return {
      ok: true,
      message: `Karpenter added GPU capacity on demand: NodePool ${pool} grew from ${baseline} to ${nodes} node(s) and ${podsRunning(pods)} one-GPU test pods run`,
    };
  } finally {
    const gone = await deleteCreated(ctx.client, created);
    if (gone.length > 0) steps.push(`${at()} deleted ${gone.join(", ")}`);
  }
}

async function listPods(
  ctx: Pick<CheckContext, "client" | "testNamespace">,
  app: string,
): Promise<PodLike[]> {
  try {
    return (
      await ctx.client.list<PodLike>("v1", "Pod", {
        namespace: ctx.testNamespace,
        labelSelector: `app=${app}`,
      })
    ).items;
  } catch {
    return [];
  }
}

async function karpenter(ctx: CheckContext, d: DeploymentLike): Promise<Verdict> {
  const notReady = karpenterReady(d);
  ctx.evidence(
    "Karpenter",
    `Deployment ${where(d)}: ${d.status?.availableReplicas ?? 0}/${d.spec?.replicas ?? 1} available`,
    `kubectl get deployment -A -l ${KARPENTER_SELECTORS[0]}`,
  );
  if (notReady) return failed(notReady);
  let pools: NodePoolLike[];
  try {
    pools = (await ctx.client.list<NodePoolLike>("karpenter.sh/v1", "NodePool")).items;
  } catch (err) {
    return failed(`cannot list Karpenter NodePools (karpenter.sh/v1): ${errorText(err)}`);
  }
  const gpu = gpuPools(pools);
  ctx.evidence(
    "Karpenter NodePools",
    pools
      .map(
        (p) =>
          `${p.metadata?.name}: limits ${JSON.stringify(p.spec?.limits ?? {})}${gpu.includes(p.metadata?.name ?? "") ? " (GPU)" : ""}`,
      )
      .join("\n") || "(none)",
    "kubectl get nodepools.karpenter.sh",
  );
  if (gpu.length === 0)
    return failed(
      `no Karpenter NodePool has a ${GPU_RESOURCE} limit (${pools.length} pool(s)${pools.length > 0 ? `: ${pools.map((p) => p.metadata?.name).join(", ")}` : ""}): none can provision GPU nodes`,
    );
  const gpuNodes = await ctx.client.list<NodeLike>("v1", "Node", { labelSelector: GPU_NODE_SELECTOR }).then(
    (l) =>
      l.items
        .map(
          (n) =>
            `${n.metadata?.name}${n.metadata?.labels?.[NODEPOOL_LABEL] ? ` (pool ${n.metadata.labels[NODEPOOL_LABEL]})` : ""}`,
        )
        .join("\n") || "(none)",
    (err) => `cannot list: ${errorText(err)}`,
  );
  ctx.evidence("GPU nodes", gpuNodes, `kubectl get nodes -l ${GPU_NODE_SELECTOR}`);
  const steps: string[] = [];
  let last = "";
  try {
    for (const [i, pool] of gpu.entries()) {
      const outcome = await tryPool(ctx, pool, i, steps);
      if (outcome.ok) return passed(outcome.message, steps);
      last = outcome.message;
      if (ctx.signal.aborted) break;
    }
  } finally {
    ctx.evidence("Cluster autoscaling test", steps.join("\n"));
  }
  return failed(last, steps);
}

/** What the platform fallback read (no Karpenter). */
export interface FallbackReads {
  providerID: string | undefined;
  gpuNodes: NodeLike[];
  /** EKS: the Cluster Autoscaler Deployment found available, `<ns>/<name>`. */
  autoscaler?: string | undefined;
  /** GKE: the status ConfigMap's `status`, first 2000 characters, and where. */
  status?: { where: string; text: string } | undefined;
  /** GKE: the newest autoscaler events, one line each. */
  events?: string[] | undefined;
}

export type Platform = "eks" | "gke" | "other";
export const platformOf = (providerID: string | undefined): Platform =>
  providerID?.startsWith("aws://") ? "eks" : providerID?.startsWith("gce://") ? "gke" : "other";

/** gce://<project>/<zone>/<instance> (pure). */
export function parseGceProviderId(
  id: string,
): { project: string; zone: string; instance: string } | undefined {
  const m = /^gce:\/\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(id);
  return m ? { project: m[1] ?? "", zone: m[2] ?? "", instance: m[3] ?? "" } : undefined;
}

const label = (n: NodeLike, key: string) => n.metadata?.labels?.[key];

/** The node group of the GPU nodes: eks.amazonaws.com/nodegroup, else nodeGroup, of any GPU node (pure). */
export const eksNodeGroup = (gpuNodes: readonly NodeLike[]): string | undefined =>
  gpuNodes.map((n) => label(n, "eks.amazonaws.com/nodegroup")).find(Boolean) ??
  gpuNodes.map((n) => label(n, "nodeGroup")).find(Boolean);

/** The verdict without Karpenter (pure). */
export function fallbackVerdict(r: FallbackReads): Verdict {
  const platform = platformOf(r.providerID);
  if (platform === "other")
    return skipped(
      `no Karpenter, and the first node's providerID (${r.providerID || "none"}) is neither aws:// (EKS) nor gce:// (GKE): no cluster autoscaler to test`,
    );
  const names = r.gpuNodes.map((n) => n.metadata?.name ?? "").join(", ");
  if (r.gpuNodes.length === 0)
    return failed(
      `${platform === "eks" ? "EKS" : "GKE"}: no GPU node (label ${GPU_NODE_SELECTOR}): no GPU capacity to autoscale`,
    );
  if (platform === "eks") {
    const group = eksNodeGroup(r.gpuNodes);
    const region = r.gpuNodes.map((n) => label(n, "topology.kubernetes.io/region")).find(Boolean);
    const details = [
      `GPU nodes: ${names}`,
      `node group: ${group ?? "(none)"}`,
      `region: ${region ?? "(unknown)"}`,
      `Cluster Autoscaler: ${r.autoscaler ?? "(none found)"}`,
    ];
    if (!group && !r.autoscaler)
      return failed(
        `EKS: the GPU nodes belong to no node group (label eks.amazonaws.com/nodegroup or nodeGroup) and no Cluster Autoscaler Deployment is available (${CLUSTER_AUTOSCALER_NAMES.join(" or ")} in ${CLUSTER_AUTOSCALER_NAMESPACES.join(", ")})`,
        details,
      );
    return passed(
      `EKS: ${r.gpuNodes.length} GPU node(s)${group ? ` in node group ${group}` : ""}${region ? ` (${region})` : ""}${r.autoscaler ? `, Cluster Autoscaler ${r.autoscaler} available` : ", no Cluster Autoscaler Deployment found (node-group scaling assumed)"}`,
      details,
    );
  }
  const pools = [
    ...new Set(r.gpuNodes.map((n) => label(n, "cloud.google.com/gke-nodepool")).filter(Boolean)),
  ];
  const details = [
    ...r.gpuNodes.map((n) => {
      const gce = parseGceProviderId(n.spec?.providerID ?? "");
      const noScaleDown = n.metadata?.annotations?.["cluster-autoscaler.kubernetes.io/scale-down-disabled"];
      return `node ${n.metadata?.name}: pool ${label(n, "cloud.google.com/gke-nodepool") ?? "(none)"}${gce ? `, project ${gce.project}, zone ${gce.zone}` : ""}${noScaleDown ? `, scale-down-disabled ${noScaleDown}` : ""}`;
    }),
    ...(r.events ?? []).map((e) => `event: ${e}`),
  ];
  if (!r.status)
    return passed(
      `GKE: ${r.gpuNodes.length} GPU node(s)${pools.length > 0 ? ` in node pool(s) ${pools.join(", ")}` : ""}; the ${AUTOSCALER_STATUS_CONFIGMAP} ConfigMap was not found, so the autoscaler is only partly confirmed`,
      details,
    );
  return passed(
    `GKE: ${r.gpuNodes.length} GPU node(s)${pools.length > 0 ? ` in node pool(s) ${pools.join(", ")}` : ""}; cluster autoscaler status in ${r.status.where}`,
    details,
  );
}

/** Deployment `name` in `namespace`, if available, through a list (the identity lists, never gets). */
async function availableDeployment(ctx: Pick<CheckContext, "client">, namespace: string, name: string) {
  try {
    const d = (
      await ctx.client.list<DeploymentLike>("apps/v1", "Deployment", {
        namespace,
        fieldSelector: `metadata.name=${name}`,
      })
    ).items[0];
    return d && (d.status?.availableReplicas ?? 0) >= 1 ? `${namespace}/${name}` : undefined;
  } catch {
    return undefined;
  }
}

async function readFallback(ctx: CheckContext): Promise<{ error: Verdict } | { reads: FallbackReads }> {
  let first: NodeLike | undefined;
  try {
    first = (await ctx.client.list<NodeLike>("v1", "Node", { limit: 1 })).items[0];
  } catch (err) {
    return { error: failed(`cannot list nodes: ${errorText(err)}`) };
  }
  const providerID = first?.spec?.providerID;
  const platform = platformOf(providerID);
  if (platform === "other") return { reads: { providerID, gpuNodes: [] } };
  let gpuNodes: NodeLike[];
  try {
    gpuNodes = (await ctx.client.list<NodeLike>("v1", "Node", { labelSelector: GPU_NODE_SELECTOR })).items;
  } catch (err) {
    return { error: failed(`cannot list the GPU nodes: ${errorText(err)}`) };
  }
  if (platform === "eks") {
    let autoscaler: string | undefined;
    for (const ns of CLUSTER_AUTOSCALER_NAMESPACES)
      for (const name of CLUSTER_AUTOSCALER_NAMES) autoscaler ??= await availableDeployment(ctx, ns, name);
    return { reads: { providerID, gpuNodes, autoscaler } };
  }
  let status: FallbackReads["status"];
  for (const ns of CLUSTER_AUTOSCALER_NAMESPACES) {
    if (status) break;
    const cm = await ctx.client
      .get<{ data?: Record<string, string> }>({
        apiVersion: "v1",
        kind: "ConfigMap",
        namespace: ns,
        name: AUTOSCALER_STATUS_CONFIGMAP,
      } satisfies ObjectRef)
      .catch(() => undefined);
    if (cm)
      status = {
        where: `${ns}/${AUTOSCALER_STATUS_CONFIGMAP}`,
        text: (cm.data?.status ?? "").slice(0, STATUS_CHARS),
      };
  }
  const events: { at: string; line: string }[] = [];
  for (const reason of AUTOSCALER_EVENT_REASONS) {
    const list = await ctx.client
      .list<{
        metadata?: { namespace?: string; creationTimestamp?: string };
        involvedObject?: { kind?: string; name?: string };
        lastTimestamp?: string;
        eventTime?: string;
        message?: string;
      }>("v1", "Event", { fieldSelector: `reason=${reason}` })
      .catch(() => ({ items: [] }));
    for (const e of list.items) {
      const at = e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? "";
      events.push({
        at,
        line: `${at} ${reason} ${e.involvedObject?.kind}/${e.involvedObject?.name}: ${e.message ?? ""}`,
      });
    }
  }
  events.sort((a, b) => a.at.localeCompare(b.at));
  return { reads: { providerID, gpuNodes, status, events: events.slice(-MAX_EVENTS).map((e) => e.line) } };
}

export const run: CheckRun = async (ctx) => {
  let found: DeploymentLike | undefined;
  try {
    for (const labelSelector of KARPENTER_SELECTORS) {
      found = (await ctx.client.list<DeploymentLike>("apps/v1", "Deployment", { labelSelector })).items[0];
      if (found) break;
    }
  } catch (err) {
    return failed(`cannot list Deployments to find Karpenter: ${errorText(err)}`);
  }
  if (found) return karpenter(ctx, found);
  const read = await readFallback(ctx);
  if ("error" in read) return read.error;
  const r = read.reads;
  const platform = platformOf(r.providerID);
  ctx.evidence(
    "Platform",
    `Karpenter: not found (${KARPENTER_SELECTORS.join(", ")})\nproviderID of the first node: ${r.providerID || "(none)"}\nplatform: ${platform === "other" ? "unknown" : platform.toUpperCase()}`,
    "kubectl get nodes -o jsonpath='{.items[0].spec.providerID}'",
  );
  if (platform !== "other") {
    ctx.evidence(
      "GPU nodes",
      r.gpuNodes.map((n) => `${n.metadata?.name}: ${JSON.stringify(n.metadata?.labels ?? {})}`).join("\n") ||
        "(none)",
      `kubectl get nodes -l ${GPU_NODE_SELECTOR} --show-labels`,
    );
    if (platform === "eks")
      ctx.evidence("Cluster Autoscaler", r.autoscaler ?? "(no available Deployment found)");
    if (platform === "gke") {
      ctx.evidence(
        "Cluster autoscaler status",
        r.status ? `${r.status.where}:\n${r.status.text}` : `${AUTOSCALER_STATUS_CONFIGMAP}: not found`,
        `kubectl -n kube-system get configmap ${AUTOSCALER_STATUS_CONFIGMAP} -o yaml`,
      );
      ctx.evidence("Cluster autoscaler events", (r.events ?? []).join("\n") || "(none)");
    }
  }
  return fallbackVerdict(r);
};

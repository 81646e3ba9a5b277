/** The built-in validators' verdicts, computed from what they read. Pure: the I/O is in run.ts. */

import type { ClusterPolicy, Json, V1Node, V1Pod } from "../../kube/types.ts";
import { readingText } from "../../snapshot/readings.ts";
import type { Snapshot } from "../../snapshot/schema.ts";
import { describeExpression, evaluate, parseExpression } from "../_expression.ts";

export type VerdictStatus = "passed" | "failed" | "skipped";

export interface Verdict {
  status: VerdictStatus;
  message: string;
  /** One line per object looked at. */
  details: string[];
}

export const GPU_OPERATOR_NAMESPACE = "gpu-operator";
export const GPU_RESOURCE = "nvidia.com/gpu";
export const VERSION_CONSTRAINT = "Deployment.gpu-operator.version";

/** Pods and nodes as the API's JSON carries them (kube/types.ts). */
type Pod = Json<V1Pod>;
type Node = Json<V1Node>;

const HEALTHY_PHASES = new Set(["Running", "Succeeded"]);

export function operatorHealth(policies: readonly ClusterPolicy[], pods: readonly Pod[]): Verdict {
  const details = [
    ...policies.map((p) => `ClusterPolicy ${p.metadata?.name}: state ${p.status?.state ?? "(none)"}`),
    ...pods.map((p) => `pod ${GPU_OPERATOR_NAMESPACE}/${p.metadata?.name}: ${p.status?.phase ?? "Unknown"}`),
  ];
  if (policies.length === 0)
    return {
      status: "failed",
      message: "no ClusterPolicy found: the GPU Operator is not installed",
      details,
    };
  const notReady = policies.filter((p) => p.status?.state !== "ready");
  if (notReady.length > 0) {
    const list = notReady.map((p) => `${p.metadata?.name} (${p.status?.state ?? "no state"})`).join(", ");
    return { status: "failed", message: `ClusterPolicy not ready: ${list}`, details };
  }
  if (pods.length === 0)
    return { status: "failed", message: `no operand pods in namespace ${GPU_OPERATOR_NAMESPACE}`, details };
  const unhealthy = pods.filter((p) => !HEALTHY_PHASES.has(p.status?.phase ?? ""));
  if (unhealthy.length > 0) {
    const list = unhealthy.map((p) => `${p.metadata?.name} (${p.status?.phase ?? "Unknown"})`).join(", ");
    return { status: "failed", message: `${unhealthy.length} operand pod(s) not Running: ${list}`, details };
  }
  return { status: "passed", message: `ClusterPolicy ready; ${pods.length} operand pod(s) Running`, details };
}

const gpus = (n: Node): number => Number(n.status?.allocatable?.[GPU_RESOURCE] ?? "0") || 0;
export const isGpuNode = (n: Node): boolean =>
  n.metadata?.labels?.["nvidia.com/gpu.present"] === "true" ||
  Number(n.status?.capacity?.[GPU_RESOURCE] ?? 0) > 0;

/** The GPU count the snapshot's node reported (hardware enumeration first, then nvidia-smi). */
export function snapshotGpuCount(snapshot: Snapshot): number | undefined {
  const text = readingText(snapshot, "GPU.hardware.gpu-count") ?? readingText(snapshot, "GPU.smi.gpu-count");
  return text === undefined ? undefined : Number(text);
}

export function expectedResources(nodes: readonly Node[], snapshot: Snapshot): Verdict {
  const gpuNodes = nodes.filter(isGpuNode);
  const details = gpuNodes.map((n) => `node ${n.metadata?.name}: allocatable ${GPU_RESOURCE}=${gpus(n)}`);
  const source = String(snapshot.metadata["source-node"] ?? "");
  const counted = snapshotGpuCount(snapshot);
  if (gpuNodes.length === 0) {
    return counted && counted > 0
      ? {
          status: "failed",
          message: `the snapshot found ${counted} GPU(s) on ${source}, but no node advertises ${GPU_RESOURCE}`,
          details,
        }
      : { status: "skipped", message: "no GPU nodes in the cluster and none in the snapshot", details };
  }
  const empty = gpuNodes.filter((n) => gpus(n) <= 0);
  if (empty.length > 0) {
    const list = empty.map((n) => n.metadata?.name).join(", ");
    return {
      status: "failed",
      message: `GPU node(s) advertise no allocatable ${GPU_RESOURCE}: ${list}`,
      details,
    };
  }
  const sourceNode = gpuNodes.find((n) => n.metadata?.name === source);
  if (sourceNode && counted !== undefined && gpus(sourceNode) !== counted) {
    return {
      status: "failed",
      message: `node ${source} advertises ${gpus(sourceNode)} allocatable ${GPU_RESOURCE}, but the snapshot found ${counted} GPU(s) on it`,
      details,
    };
  }
  return {
    status: "passed",
    message: `${gpuNodes.length} GPU node(s), each with allocatable ${GPU_RESOURCE}`,
    details,
  };
}

/** The tag of an image reference (`nvcr.io/nvidia/gpu-operator:v25.10.1` → `v25.10.1`). */
export function imageReferenceTag(image: string): string | undefined {
  const last = image.split("@")[0]?.split("/").pop() ?? "";
  const at = last.lastIndexOf(":");
  return at < 0 ? undefined : last.slice(at + 1);
}

const isOperatorPod = (p: Pod): boolean =>
  p.metadata?.labels?.app === "gpu-operator" ||
  p.metadata?.labels?.["app.kubernetes.io/name"] === "gpu-operator";

export function gpuOperatorVersion(constraint: string | undefined, pods: readonly Pod[]): Verdict {
  if (constraint === undefined)
    return { status: "skipped", message: `the recipe sets no ${VERSION_CONSTRAINT} constraint`, details: [] };
  const operator = pods.find(isOperatorPod);
  const image = operator?.spec?.containers?.[0]?.image;
  const tag = image ? imageReferenceTag(image) : undefined;
  const details = operator
    ? [`pod ${GPU_OPERATOR_NAMESPACE}/${operator.metadata?.name}: image ${image}`]
    : [];
  if (!operator || !tag) {
    return {
      status: "failed",
      message: operator
        ? `the GPU Operator image ${JSON.stringify(image)} carries no version tag`
        : `no GPU Operator pod (label app=gpu-operator) in namespace ${GPU_OPERATOR_NAMESPACE}`,
      details,
    };
  }
  const expr = parseExpression(constraint);
  const ok = evaluate(tag, expr).holds;
  return {
    status: ok ? "passed" : "failed",
    message: `deployed GPU Operator ${tag}; ${VERSION_CONSTRAINT} expects ${describeExpression(expr)}`,
    details,
  };
}

const capacityOf = (n: Node | undefined, field: "capacity" | "allocatable"): number =>
  Number(n?.status?.[field]?.[GPU_RESOURCE] ?? "0") || 0;

/**
 * The GPU nodes check-nvidia-smi runs on: GPU nodes (labelled nvidia.com/gpu.present=true or with
 * nvidia.com/gpu capacity) matching the --node-selector and not cordoned, sorted by name; above `max`, `max` of them
 * evenly spaced over that order (the same cluster always gives the same sample).
 */
export function sampleGpuNodes(
  nodes: readonly Node[],
  selector: Readonly<Record<string, string>> | undefined,
  max: number,
): { nodes: Node[]; total: number; cordoned: string[] } {
  const selected = nodes
    .filter(isGpuNode)
    .filter((n) => Object.entries(selector ?? {}).every(([k, v]) => n.metadata?.labels?.[k] === v))
    .sort((a, b) => String(a.metadata?.name).localeCompare(String(b.metadata?.name)));
  // A cordoned node takes no new pod: it is left out and named, not reported as a pod that never ran.
  const cordoned = selected.filter((n) => n.spec?.unschedulable).map((n) => String(n.metadata?.name));
  const matching = selected.filter((n) => !n.spec?.unschedulable);
  if (matching.length <= max) return { nodes: matching, total: matching.length, cordoned };
  const picked: Node[] = [];
  for (let i = 0; i < max; i++) picked.push(matching[Math.floor((i * matching.length) / max)] as Node);
  return { nodes: picked, total: matching.length, cordoned };
}

/** A node check-nvidia-smi cannot place a pod on: it has no allocatable GPU to hold. */
export const hasAllocatableGpu = (n: Node): boolean => capacityOf(n, "allocatable") > 0;

/** What nvidia-smi said on the node: a GPU count, or why there is none. */
export type SmiReading = { gpus: number } | { problem: string };

/**
 * One node's check-nvidia-smi verdict: nvidia-smi's GPU count must equal the node's nvidia.com/gpu
 * capacity (what the device plugin registered). The message names the node and both counts.
 */
export function nvidiaSmiVerdict(nodeName: string, node: Node | undefined, smi: SmiReading): Verdict {
  const capacity = capacityOf(node, "capacity");
  const allocatable = capacityOf(node, "allocatable");
  const counts = `capacity ${GPU_RESOURCE}=${capacity}, allocatable ${allocatable}`;
  const details = [`node ${nodeName}: ${counts}`];
  if ("problem" in smi)
    return { status: "failed", message: `node ${nodeName}: ${smi.problem} (${counts})`, details };
  details.push(`node ${nodeName}: nvidia-smi reports ${smi.gpus} GPU(s)`);
  if (!node)
    return {
      status: "failed",
      message: `node ${nodeName}: nvidia-smi reports ${smi.gpus} GPU(s), but the node object could not be read`,
      details,
    };
  if (smi.gpus !== capacity)
    return {
      status: "failed",
      message: `node ${nodeName}: nvidia-smi reports ${smi.gpus} GPU(s), but the node's ${counts}`,
      details,
    };
  return {
    status: "passed",
    message: `node ${nodeName}: nvidia-smi reports ${smi.gpus} GPU(s), matching ${counts}`,
    details,
  };
}

/** The GPU count in `nvidia-smi -q -x` output: attached_gpus, else the number of <gpu> elements. */
export function smiGpuCount(xml: string): number | undefined {
  if (!/<nvidia_smi_log[\s>]/.test(xml)) return undefined;
  const attached = /<attached_gpus>\s*(\d+)\s*<\/attached_gpus>/.exec(xml)?.[1];
  if (attached !== undefined) return Number(attached);
  return [...xml.matchAll(/<gpu[\s>]/g)].length;
}

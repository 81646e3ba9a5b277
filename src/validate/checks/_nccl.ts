/**
 * nccl-all-reduce-bw's decisions, pure: which recipes and clusters it applies to (in the original's
 * order), the threshold a constraint value sets, the bus bandwidth an nccl-tests table reports, and
 * the verdict. The reads and writes are in nccl-all-reduce-bw.ts, the Trainer objects in _nccl-templates.ts.
 */
import type { Json, V1Node } from "../../kube/types.ts";
import type { Recipe } from "../recipe.ts";

export const NCCL_CHECK = "nccl-all-reduce-bw";
/** The recipe constraint the check reads: spec.validation.performance.constraints[name=nccl-all-reduce-bw]. */
export const NCCL_CONSTRAINT = NCCL_CHECK;
/** A measurement passes at 90% of the threshold or more (the operator of the constraint is not read). */
export const TOLERANCE = 0.9;

export const GPU_RESOURCE = "nvidia.com/gpu";
export const EFA_RESOURCE = "vpc.amazonaws.com/efa";
export const INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type";

/** The Kubeflow Trainer v2 CRDs the check needs (it never installs them). */
export const TRAINER_GROUP = "trainer.kubeflow.org";
export const TRAINER_VERSION = `${TRAINER_GROUP}/v1alpha1`;
export const TRAINER_CRDS = [`trainjobs.${TRAINER_GROUP}`, `trainingruntimes.${TRAINER_GROUP}`] as const;
export const TRAINER_INSTALL =
  'kubectl apply --server-side -k "https://github.com/kubeflow/trainer.git/manifests/overlays/manager?ref=v2.1.0"';

/** The original's waits (scaled by ctx.waitMs where used). */
export const WAIT = {
  /** The TrainingRuntime readable before the TrainJob is created (the Trainer webhook's race). */
  runtimeVisibleMs: 2 * 60_000,
  runtimePollMs: 500,
  /** The launcher pod appears. */
  launcherAppearsMs: 5 * 60_000,
  launcherPollMs: 1000,
  /** The TrainJob runs (in practice the check's deadline ends it first). */
  trainJobRunMs: 30 * 60_000,
} as const;

export type Platform = "eks" | "gke";

/** The test images the original pulled per platform: named as examples when --nccl-image is missing. */
export const ORIGINAL_IMAGES: Record<Platform, string> = {
  eks: "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9",
  gke: "nvcr.io/nvidia/pytorch:25.06-py3",
};

const SUPPORTED: Record<string, Platform> = { "eks/h100": "eks", "gke/h100": "gke" };

export type Gate<T> =
  | { kind: "skip"; message: string; details?: string[] }
  | { kind: "fail"; message: string; details?: string[] }
  | ({ kind: "go" } & T);

/**
 * The threshold a constraint value sets, in GB/s: leading comparison signs and spaces dropped, the
 * text up to the first space read as a decimal number (a unit after a space is ignored). Undefined
 * when that is not a finite number ("300GB/s", "abc", "").
 */
export function parseThreshold(value: string): number | undefined {
  const bare = value.trim().replace(/^[<>=!\s]+/, "");
  const head = bare.split(" ")[0] ?? "";
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(head)) return undefined;
  const n = Number(head);
  return Number.isFinite(n) ? n : undefined;
}

/** A criteria field of the recipe (typed unknown in the schema): a trimmed lower-case string, or "". */
function criterion(criteria: unknown, key: string): string {
  const v = (criteria as Record<string, unknown> | null | undefined)?.[key];
  return typeof v === "string" ? v.trim().toLowerCase() : "";
}

/**
 * Steps 1–4, from the recipe alone: the constraint present, the recipe's criteria naming a service
 * and accelerator the check has a template for, and a threshold that parses.
 */
export function recipeGate(
  recipe: Recipe | undefined,
): Gate<{ platform: Platform; constraint: string; threshold: number }> {
  const constraint = recipe?.spec.validation?.performance?.constraints.find(
    (c) => c.name === NCCL_CONSTRAINT,
  );
  if (!constraint)
    return {
      kind: "skip",
      message: `no ${NCCL_CONSTRAINT} constraint in the recipe (spec.validation.performance.constraints): nothing to measure against`,
    };
  const criteria = recipe?.spec.criteria;
  if (criteria === undefined || criteria === null || typeof criteria !== "object")
    return {
      kind: "skip",
      message:
        "skipped: the recipe has no criteria, and the check needs its service and accelerator to pick a test template",
    };
  const service = criterion(criteria, "service");
  const accelerator = criterion(criteria, "accelerator");
  const platform = SUPPORTED[`${service}/${accelerator}`];
  if (!platform)
    return {
      kind: "skip",
      message: `skipped: no NCCL test template for service ${JSON.stringify(service || "(none)")} with accelerator ${JSON.stringify(accelerator || "(none)")}; implemented: eks with h100, gke with h100`,
    };
  const threshold = parseThreshold(constraint.value);
  if (threshold === undefined)
    return {
      kind: "fail",
      message: `the ${NCCL_CONSTRAINT} constraint ${JSON.stringify(constraint.value)} is not a bandwidth: expected a number of GB/s such as ">= 300" or "100.5 GB/s"`,
    };
  return { kind: "go", platform, constraint: constraint.value, threshold };
}

type Node = Json<V1Node>;

const allocatable = (n: Node, resource: string): number => {
  const v = Number(n.status?.allocatable?.[resource] ?? "0");
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
};

export interface GpuNodes {
  /** The schedulable nodes with allocatable GPUs, in list order; the first one's counts stand for all. */
  nodes: Node[];
  gpusPerNode: number;
  workers: number;
  ranks: number;
}

/**
 * Steps 5–6, from the live Node list: the schedulable nodes advertising GPUs (none → FAIL), the first
 * one's GPU count for every node, one worker per node, and at least two of them (else SKIP).
 */
export function nodeGate(all: readonly Node[]): Gate<GpuNodes> {
  const nodes = all.filter((n) => !n.spec?.unschedulable && allocatable(n, GPU_RESOURCE) > 0);
  if (nodes.length === 0)
    return {
      kind: "fail",
      message: `no schedulable node advertises allocatable ${GPU_RESOURCE} (${all.length} node(s) listed)`,
    };
  const gpusPerNode = allocatable(nodes[0]!, GPU_RESOURCE);
  if (gpusPerNode <= 0)
    return {
      kind: "fail",
      message: `node ${nodes[0]!.metadata?.name} reports no allocatable ${GPU_RESOURCE}`,
    };
  const workers = nodes.length;
  if (workers < 2)
    return {
      kind: "skip",
      message: `skipped: the east-west fabric test needs at least 2 GPU nodes; found ${workers} (${nodes[0]!.metadata?.name})`,
    };
  return { kind: "go", nodes, gpusPerNode, workers, ranks: workers * gpusPerNode };
}

/**
 * Our prerequisites (the original installed Trainer and had its images built in): the operator's NCCL
 * test image and Kubeflow Trainer's CRDs. Both missing are named together.
 */
export function prerequisiteGate(o: {
  platform: Platform;
  ncclImage: string | undefined;
  missingCrds: readonly string[];
}): Gate<{ image: string }> {
  const reasons: string[] = [];
  const details: string[] = [];
  if (!o.ncclImage) {
    reasons.push("no NCCL test image was given (--nccl-image)");
    details.push(
      `pass --nccl-image <image with nccl-tests, OpenMPI and sshd>; on ${o.platform.toUpperCase()} the original used ${ORIGINAL_IMAGES[o.platform]}`,
    );
  }
  if (o.missingCrds.length > 0) {
    reasons.push(`Kubeflow Trainer is not installed (no CRD ${o.missingCrds.join(", ")})`);
    details.push(`install Kubeflow Trainer v2 yourself (aicr never installs it), e.g. ${TRAINER_INSTALL}`);
  }
  if (!o.ncclImage || reasons.length > 0)
    return { kind: "skip", message: `skipped: ${reasons.join("; ")}`, details };
  return { kind: "go", image: o.ncclImage };
}

/**
 * EKS workers: the first GPU node's instance type as their node selector (missing → FAIL; other types
 * among the GPU nodes are only warned about) and its EFA adapters.
 */
export function eksShape(
  nodes: readonly Node[],
): Gate<{ instanceType: string; efa: number; otherTypes: string[] }> {
  const first = nodes[0];
  const instanceType = first?.metadata?.labels?.[INSTANCE_TYPE_LABEL];
  if (!first || !instanceType)
    return {
      kind: "fail",
      message: `GPU node ${first?.metadata?.name ?? "(none)"} has no ${INSTANCE_TYPE_LABEL} label: the EKS workers are placed by it`,
    };
  const otherTypes = [
    ...new Set(
      nodes
        .map((n) => n.metadata?.labels?.[INSTANCE_TYPE_LABEL] ?? "(none)")
        .filter((t) => t !== instanceType),
    ),
  ].sort();
  return { kind: "go", instanceType, efa: allocatable(first, EFA_RESOURCE), otherTypes };
}

/** GKE needs one GPU NIC network per GPU: the Networks whose name holds this. */
export const GKE_GPU_NIC = "gpu-nic";
export const GKE_MIN_GPU_NICS = 8;

/** GKE workers: the sorted names of the networking.gke.io Networks holding "gpu-nic" (fewer than 8 → FAIL). */
export function gkeNetworks(names: readonly string[]): Gate<{ networks: string[] }> {
  const networks = names.filter((n) => n.includes(GKE_GPU_NIC)).sort();
  if (networks.length < GKE_MIN_GPU_NICS)
    return {
      kind: "fail",
      message: `found ${networks.length} GPU NIC network(s) (networking.gke.io/v1 Networks named *${GKE_GPU_NIC}*), expected at least ${GKE_MIN_GPU_NICS} for GPUDirect-TCPXO${networks.length > 0 ? `: ${networks.join(", ")}` : ""}`,
    };
  return { kind: "go", networks };
}

/** An nccl-tests data row: size, count, type, redop, root, then the out-of-place time, algbw, busbw. */
const DATA_ROW =
  /^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)/;

/**
 * The out-of-place bus bandwidth (GB/s) of the last data row (the largest message) of an nccl-tests
 * output; undefined when no line is a data row (`#` lines, including the average, never are).
 */
export function parseBusBandwidth(output: string): { busbw: number; size: number } | undefined {
  let last: { busbw: number; size: number } | undefined;
  for (const line of output.split(/\r?\n/)) {
    const m = DATA_ROW.exec(line);
    if (m) last = { size: Number(m[1]), busbw: Number(m[8]) };
  }
  return last;
}

/** The two evidence lines: the measurement and the constraint's outcome. */
export function evidenceLines(busbw: number, constraint: string, passed: boolean): string {
  return `NCCL All Reduce bandwidth: ${busbw.toFixed(2)} GB/s\nConstraint: ${constraint} → ${passed}`;
}

/** PASS iff the bus bandwidth is at least 90% of the threshold. */
export function bandwidthVerdict(
  busbw: number,
  constraint: string,
  threshold: number,
): { passed: boolean; message: string } {
  const floor = threshold * TOLERANCE;
  const passed = busbw >= floor;
  const bound = `at least ${floor.toFixed(2)} GB/s with the ${Math.round((1 - TOLERANCE) * 100)}% tolerance`;
  return {
    passed,
    message: passed
      ? `NCCL all-reduce bus bandwidth ${busbw.toFixed(2)} GB/s meets the constraint ${JSON.stringify(constraint)} (${bound})`
      : `NCCL all-reduce bus bandwidth ${busbw.toFixed(2)} GB/s is below the constraint ${JSON.stringify(constraint)} (${bound})`,
  };
}

/** The last `n` non-empty lines of a log, for a failure's details. */
export function logTail(log: string, n = 20): string[] {
  return log
    .split(/\r?\n/)
    .filter((l) => l.trim() !== "")
    .slice(-n);
}

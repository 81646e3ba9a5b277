/** check-nvidia-smi: one Job per sampled GPU node, each pod holding one GPU; one report row for them all. */
import type { Json, V1Node } from "../../kube/types.ts";
import { MAX_NVIDIA_SMI_NODES, type PlannedCheck } from "../_catalog.ts";
import type { CheckResult, CheckStatus } from "../_report.ts";
import { GPU_RESOURCE, hasAllocatableGpu, sampleGpuNodes } from "../validator/_checks.ts";
import { type RunOneIo, runOneCheck } from "./_run-one.ts";

const MAX_LINES = 50;

/** The nodes' rows as the check's one row: failed before other before passed; every failure named. */
export function mergeNodeRows(
  check: PlannedCheck,
  rows: readonly { node: string; row: CheckResult }[],
  sample: { total: number; max: number; cordoned?: readonly string[] },
  durationMs: number,
): CheckResult {
  const base = { suite: check.phase, name: check.name, durationMs };
  const cordoned = sample.cordoned?.length ? ` (cordoned, left out: ${sample.cordoned.join(", ")})` : "";
  if (rows.length === 0)
    return {
      ...base,
      status: "skipped",
      message: `no GPU node (label nvidia.com/gpu.present=true or ${GPU_RESOURCE} capacity) matches: nothing to run nvidia-smi on${cordoned}`,
      stdout: [],
    };
  const named = (r: { node: string; row: CheckResult }) =>
    r.row.message?.startsWith(`node ${r.node}`)
      ? r.row.message
      : `node ${r.node}: ${r.row.message ?? r.row.status}`;
  const order: CheckStatus[] = ["failed", "other", "passed", "skipped"];
  const status = order.find((s) => rows.some((r) => r.row.status === s)) ?? "other";
  const of = (s: CheckStatus) => rows.filter((r) => r.row.status === s);
  const sampled =
    sample.total > rows.length
      ? ` (${rows.length} of ${sample.total} GPU nodes, sampled: at most ${sample.max})`
      : "";
  const message =
    status === "passed"
      ? `${rows.length} GPU node(s): nvidia-smi reports each node's ${GPU_RESOURCE} capacity${sampled}${cordoned}`
      : `${[...of("failed"), ...of("other")].map(named).join("; ")}${sampled}${cordoned}`;
  const stdout = rows.flatMap((r) => r.row.stdout.map((l) => `[${r.node}] ${l}`)).slice(-MAX_LINES);
  return {
    ...base,
    status,
    message,
    stdout,
    timedOut: rows.some((r) => r.row.timedOut) || undefined,
  };
}

/**
 * Runs the check on every sampled GPU node at once. A node with no allocatable GPU fails without a
 * pod (none could be scheduled there).
 */
export async function runNvidiaSmi(
  check: PlannedCheck,
  nodes: readonly Json<V1Node>[],
  selector: Readonly<Record<string, string>> | undefined,
  io: RunOneIo,
): Promise<CheckResult> {
  const start = io.now();
  if (check.skipped)
    return {
      suite: check.phase,
      name: check.name,
      durationMs: 0,
      status: "skipped",
      message: "withheld by --skip-check",
      stdout: [],
    };
  const sample = sampleGpuNodes(nodes, selector, MAX_NVIDIA_SMI_NODES);
  const settled = await Promise.allSettled(
    sample.nodes.map(async (n, index) => {
      const name = n.metadata?.name ?? "";
      if (!hasAllocatableGpu(n)) {
        const row: CheckResult = {
          suite: check.phase,
          name: check.name,
          durationMs: 0,
          status: "failed",
          message: `node ${name}: no allocatable ${GPU_RESOURCE} (capacity ${n.status?.capacity?.[GPU_RESOURCE] ?? 0}): no pod can hold a GPU there`,
          stdout: [],
        };
        return { node: name, row };
      }
      return { node: name, row: await runOneCheck(check, io, { name, index }) };
    }),
  );
  // Every node's Job settles before a failure propagates (cleanup must see every create).
  const rejected = settled.find((x): x is PromiseRejectedResult => x.status === "rejected");
  if (rejected) throw rejected.reason;
  const rows = settled.map((x) => (x as PromiseFulfilledResult<{ node: string; row: CheckResult }>).value);
  return mergeNodeRows(
    check,
    rows,
    { total: sample.total, max: MAX_NVIDIA_SMI_NODES, cordoned: sample.cordoned },
    io.now() - start,
  );
}

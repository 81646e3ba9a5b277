/** Pure: what deleting a run does to each of its objects. */
import type { RunObject, RunView } from "./types.ts";

export type PlanAction = "delete" | "collected";
export type DeleteOutcome = "planned" | "deleted" | "already-gone" | "changed" | "failed" | "left-to-gc";

export interface PlanRow {
  apiVersion: string;
  kind: string;
  namespace?: string | undefined;
  name: string;
  uid: string;
  action: PlanAction;
  reason: string;
  outcome: DeleteOutcome;
  error?: string | undefined;
  /** The failure's code (e.g. UNAUTHORIZED when forbidden), for the exit status. */
  code?: string | undefined;
}

export interface RunPlan {
  runId: string;
  namespace?: string | undefined;
  job: RunView["job"];
  rows: PlanRow[];
}

/**
 * Every object whose owners are outside the run (the anchor ClusterRole first of all) is deleted,
 * pinned to its UID; everything it owns is left to the garbage collector.
 */
export function planRun(run: RunView): RunPlan {
  const byUid = new Map(run.objects.map((o) => [o.uid, o]));
  const anchors = new Set(run.anchors);
  const row = (o: RunObject): PlanRow => {
    const owner = o.owners.map((u) => byUid.get(u)).find((x) => x !== undefined);
    const base = {
      apiVersion: o.apiVersion,
      kind: o.kind,
      ...(o.namespace ? { namespace: o.namespace } : {}),
      name: o.name,
      uid: o.uid,
      outcome: "planned" as const,
    };
    if (owner)
      return {
        ...base,
        action: "collected",
        reason: `owned by ${owner.kind} ${owner.name}: the garbage collector takes it`,
      };
    return {
      ...base,
      action: "delete",
      reason:
        o.kind === "ClusterRole" && anchors.has(o.name)
          ? "the run's anchor: deleting it lets the garbage collector take what it owns"
          : "not owned by another object of the run",
    };
  };
  return { runId: run.runId, namespace: run.namespace, job: run.job, rows: run.objects.map(row) };
}

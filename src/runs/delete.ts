/**
 * aicr runs delete: run IDs checked (pure) → each run read by label (lists only) → refusals before
 * any write (not found, still active) → confirm → UID-pinned deletes of its roots in one wave → receipt.
 */
import { AicrError, type ErrorCode, errorMessage, isAicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import { isConflict, isNotFound } from "../kube/errors.ts";
import { generateRunId, RUN_ID_PATTERN } from "../run/run-id.ts";
import { readRunObjects } from "./_observe.ts";
import { type PlanRow, planRun, type RunPlan } from "./_plan.ts";
import { runViewOf } from "./_summary.ts";
import { objectText } from "./list.ts";
import type { RunsScope, RunView } from "./types.ts";

export type { PlanRow, RunPlan };

/** The run IDs as given, each of the generated shape; a bad one is INVALID_REQUEST before any request. */
export function checkRunIds(ids: readonly string[]): string[] {
  if (ids.length === 0) {
    throw new AicrError("INVALID_REQUEST", "no run ID given", {
      remedy: 'pass one or more run IDs (see "aicr runs list")',
      context: { field: "run" },
    });
  }
  for (const id of ids) {
    if (!RUN_ID_PATTERN.test(id)) {
      throw new AicrError("INVALID_REQUEST", `invalid run ID ${JSON.stringify(id)}`, {
        remedy: `a run ID has the form YYYYMMDD-HHMMSS-<16 lowercase hex>, e.g. ${generateRunId()} (see "aicr runs list")`,
        context: { field: "run", value: id },
      });
    }
  }
  return [...new Set(ids)];
}

export interface DeleteRunsOptions {
  ids: string[];
  scope: RunsScope;
  dryRun: boolean;
  yes: boolean;
  force: boolean;
  log: Logger;
  signal: AbortSignal;
  confirm: (runs: number, objects: number) => Promise<boolean>;
}

export interface DeleteRunsResult {
  stage: "plan" | "receipt";
  runs: RunPlan[];
}

/** One run, read in scope; when its objects say it lives in another namespace, read there too. */
async function observe(client: KubeClient, scope: RunsScope, runId: string): Promise<RunView> {
  const run = runViewOf(runId, await readRunObjects(client, scope, runId));
  if (scope.allNamespaces || run.namespace === undefined || run.namespace === scope.namespace) return run;
  return runViewOf(
    runId,
    await readRunObjects(client, { allNamespaces: false, namespace: run.namespace }, runId),
  );
}

async function deleteRow(client: KubeClient, row: PlanRow): Promise<PlanRow> {
  try {
    await client.delete(row, { uid: row.uid, propagationPolicy: "Background" });
    return { ...row, outcome: "deleted" };
  } catch (err) {
    if (isNotFound(err)) return { ...row, outcome: "already-gone" };
    if (isConflict(err))
      return {
        ...row,
        outcome: "changed",
        error: "a different object now stands at this name (UID changed)",
      };
    return {
      ...row,
      outcome: "failed",
      error: errorMessage(err),
      ...(isAicrError(err) ? { code: err.code } : {}),
    };
  }
}

export function planLines(plans: RunPlan[]): string[] {
  return plans.flatMap((p) => [
    `run ${p.runId}${p.namespace ? ` in namespace ${p.namespace}` : ""} (Job: ${p.job}):`,
    ...p.rows.map((r) => {
      const what = r.outcome === "planned" ? r.action : r.outcome;
      return `  ${what.padEnd(12)} ${objectText(r)}: ${r.reason}${r.error ? ` (${r.error})` : ""}`;
    }),
  ]);
}

export function deleteRunsDocument(result: DeleteRunsResult, dryRun: boolean) {
  return {
    kind: result.stage === "plan" ? "RunDeletePlan" : "RunDeleteReceipt",
    dryRun,
    runs: result.runs,
  };
}

export async function deleteRuns(client: KubeClient, o: DeleteRunsOptions): Promise<DeleteRunsResult> {
  const runs = await Promise.all(o.ids.map((id) => observe(client, o.scope, id)));
  const where = o.scope.allNamespaces ? "any namespace" : `namespace ${o.scope.namespace}`;
  const missing = runs.filter((r) => r.objects.length === 0).map((r) => r.runId);
  if (missing.length > 0) {
    throw new AicrError(
      "NOT_FOUND",
      `no objects of run(s) ${missing.join(", ")} in ${where}; nothing was deleted`,
      {
        remedy: 'check the ID with "aicr runs list -A", or pass -n <namespace> / -A',
        context: { runIds: missing },
      },
    );
  }
  const active = runs.filter((r) => r.job === "active");
  if (active.length > 0 && !o.force) {
    throw new AicrError(
      "CONFLICT",
      `run(s) ${active.map((r) => r.runId).join(", ")} still have an active Job${active.some((r) => r.podLive) ? " with a live pod" : ""}; nothing was deleted`,
      {
        remedy: "wait for the run to finish, or pass --force to delete it while it runs",
        context: { runIds: active.map((r) => r.runId) },
      },
    );
  }
  const plans = runs.map(planRun);
  for (const line of planLines(plans)) o.log.info(line);
  if (o.dryRun) return { stage: "plan", runs: plans };
  const toDelete = plans.flatMap((p) => p.rows.filter((r) => r.action === "delete"));
  if (!o.yes && !(await o.confirm(plans.length, toDelete.length))) {
    throw new AicrError("CANCELED", `deletion of ${plans.length} run(s) was declined; nothing was deleted`, {
      remedy: "answer y at the prompt, or pass --yes to delete without asking",
    });
  }
  // One concurrent wave: each delete carries its own UID precondition.
  const done = await Promise.all(
    plans.map(async (p) => ({
      ...p,
      rows: await Promise.all(
        p.rows.map((r) =>
          r.action === "delete" ? deleteRow(client, r) : { ...r, outcome: "left-to-gc" as const },
        ),
      ),
    })),
  );
  return { stage: "receipt", runs: done };
}

/** The receipt's verdict: an error when any delete failed or met another object. */
export function deleteVerdict(result: DeleteRunsResult): AicrError | undefined {
  const rows = result.runs.flatMap((r) => r.rows);
  const failed = rows.filter((r) => r.outcome === "failed");
  const changed = rows.filter((r) => r.outcome === "changed");
  if (failed.length + changed.length === 0) return undefined;
  const code = (failed.find((r) => r.code)?.code as ErrorCode | undefined) ?? "INTERNAL";
  return new AicrError(
    code,
    `${failed.length + changed.length} object(s) not deleted: ${failed.length} failed, ${changed.length} changed since read`,
    {
      remedy: 'read the receipt for each object; run "aicr runs list" and delete again to re-read them',
      context: { failed: failed.map(objectText), changed: changed.map(objectText) },
    },
  );
}

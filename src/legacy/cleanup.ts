/**
 * The cleanup sequence: permission gate → observe → plan (pure) → confirm → delete with
 * preconditions → receipt. The command only parses flags and prints.
 */
import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import { describeMissing } from "../kube/reviews.ts";
import { applyPlan, planReceipt, tally } from "./_apply.ts";
import { runGate } from "./_gate.ts";
import { observe } from "./_observe.ts";
import { buildPlan, toDelete } from "./_plan.ts";
import { entryLine, planSummary, receiptSummary } from "./report.ts";
import type { Receipt, Scope } from "./types.ts";

export interface CleanupOptions {
  scope: Scope;
  force: boolean;
  includeConfigMaps: boolean;
  dryRun: boolean;
  /** Delete without asking. */
  yes: boolean;
  signal: AbortSignal;
  log: Logger;
  /** Asked when not `yes` and something would be deleted; the command wires the terminal prompt. */
  confirm: (count: number) => Promise<boolean>;
}

export interface CleanupResult {
  receipt: Receipt;
  /** "plan" only for a dry run; a deleting run always ends with a receipt (maybe of nothing). */
  stage: "plan" | "receipt";
}

export async function cleanupLegacy(client: KubeClient, options: CleanupOptions): Promise<CleanupResult> {
  const { log, scope, includeConfigMaps, dryRun, force } = options;
  const gate = await runGate(client, { scope, includeConfigMaps, dryRun, signal: options.signal });
  for (const c of gate.missingDeletes) log.warn(`a real run would fail: ${describeMissing(c)}`);

  const plan = buildPlan(await observe(client, scope), { force, includeConfigMaps });
  const planned = planReceipt(plan);
  log.info(planSummary(planned));
  for (const e of planned.entries) log.info(`  ${entryLine(e)}`);

  const count = toDelete(plan).length;
  if (dryRun) {
    log.info(`dry run: nothing was deleted; ${count} object(s) would be`);
    return { receipt: planned, stage: "plan" };
  }
  if (count === 0) {
    log.info("nothing to delete");
    return { receipt: planned, stage: "receipt" };
  }
  if (!options.yes && !(await options.confirm(count))) {
    throw new AicrError(
      "CANCELED",
      `deletion of ${count} legacy object(s) was declined; nothing was deleted`,
      {
        remedy: "answer y at the prompt, or pass --yes to delete without asking",
      },
    );
  }
  const receipt = await applyPlan(client, {
    plan,
    signal: options.signal,
    onOutcome: (e) => e.action === "delete" && log.info(`  ${entryLine(e)}`),
  });
  log.info(receiptSummary(tally(receipt)));
  return { receipt, stage: "receipt" };
}

/** The error a finished run ends with, or undefined when everything planned is gone. */
export function verdict(receipt: Receipt, signal: AbortSignal): AicrError | undefined {
  const t = tally(receipt);
  if (t.notAttempted > 0 && signal.aborted) {
    return new AicrError("CANCELED", `cancelled with ${t.notAttempted} legacy object(s) not yet deleted`, {
      remedy: "run the same command again; what is already gone is reported as already-gone",
    });
  }
  const left = t.changed + t.failed + t.notAttempted;
  if (left === 0) return undefined;
  return new AicrError(
    "INTERNAL",
    `${left} of ${t.planned} planned legacy object(s) were not deleted: ${t.failed} failed, ${t.changed} changed since planned`,
    {
      remedy:
        "read the receipt for each object's reason; an object changed since planned was kept on purpose — run again to re-plan it",
      context: { ...t },
    },
  );
}

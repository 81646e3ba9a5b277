/**
 * Carries out a plan: each planned delete is pinned to the UID and resourceVersion captured at plan
 * time, so an object replaced or changed since is kept. Returns the receipt; never throws for a
 * single object's failure (the receipt says what happened to each).
 */
import type { KubeClient } from "../kube/client.ts";
import { isConflict, isNotFound } from "../kube/errors.ts";
import { apiVersionOf } from "./_names.ts";
import type { Outcome, Plan, PlanEntry, Receipt, ReceiptEntry } from "./types.ts";

export interface ApplyOptions {
  plan: Plan;
  signal: AbortSignal;
  /** Called after each object, for progress on stderr. */
  onOutcome?: (entry: ReceiptEntry) => void;
}

async function deleteEntry(
  client: KubeClient,
  entry: PlanEntry,
): Promise<{ outcome: Outcome; error?: string }> {
  try {
    await client.delete(
      {
        apiVersion: apiVersionOf(entry.kind),
        kind: entry.kind,
        name: entry.name,
        namespace: entry.namespace,
      },
      {
        uid: entry.uid,
        resourceVersion: entry.resourceVersion,
        // The apiserver's default for Jobs orphans their pods; Background deletes them too.
        ...(entry.kind === "Job" ? { propagationPolicy: "Background" as const } : {}),
      },
    );
    return { outcome: "deleted" };
  } catch (err) {
    if (isNotFound(err)) return { outcome: "already-gone" };
    // A failed uid/resourceVersion precondition answers 409: someone changed or replaced it.
    if (isConflict(err)) {
      return { outcome: "changed since planned", error: (err as Error).message };
    }
    return { outcome: "failed", error: err instanceof Error ? err.message : String(err) };
  }
}

/** The plan as a receipt without touching the cluster (dry run, or before deleting). */
export function planReceipt(plan: Plan): Receipt {
  return {
    scope: plan.scope,
    entries: plan.entries.map((e) => ({ ...e, outcome: e.action === "keep" ? "kept" : "planned" })),
  };
}

export async function applyPlan(client: KubeClient, options: ApplyOptions): Promise<Receipt> {
  const { plan } = options;
  const entries: ReceiptEntry[] = [];
  for (const entry of plan.entries) {
    let result: { outcome: Outcome; error?: string };
    if (entry.action === "keep") result = { outcome: "kept" };
    else if (options.signal.aborted)
      result = { outcome: "not attempted", error: "cancelled before this delete" };
    else result = await deleteEntry(client, entry);
    const done: ReceiptEntry = { ...entry, ...result };
    entries.push(done);
    options.onOutcome?.(done);
  }
  return { scope: plan.scope, entries };
}

export interface Tally {
  planned: number;
  deleted: number;
  alreadyGone: number;
  changed: number;
  failed: number;
  notAttempted: number;
  kept: number;
}

export function tally(receipt: Receipt): Tally {
  const count = (outcome: Outcome): number => receipt.entries.filter((e) => e.outcome === outcome).length;
  return {
    planned: receipt.entries.filter((e) => e.action === "delete").length,
    deleted: count("deleted"),
    alreadyGone: count("already-gone"),
    changed: count("changed since planned"),
    failed: count("failed"),
    notAttempted: count("not attempted"),
    kept: count("kept"),
  };
}

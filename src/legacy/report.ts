/** The plan and receipt as the operator reads them (stderr) and as scripts read them (-o json). Pure. */
import { visible } from "../core/terminal.ts";
import { type Tally, tally } from "./_apply.ts";
import type { Receipt, ReceiptEntry, Scope } from "./types.ts";

export const describeScope = (scope: Scope): string =>
  scope.allNamespaces ? "all namespaces" : `namespace(s) ${scope.namespaces.map(visible).join(", ")}`;

const objectText = (e: ReceiptEntry): string => `${e.kind} ${e.namespace ? `${e.namespace}/` : ""}${e.name}`;

/**
 * One line per object: what will happen (or happened) and why. The object's names, the reason and the
 * apiserver's error are made visible (core/terminal.ts): the line stays one line, its escapes shown.
 */
export function entryLine(e: ReceiptEntry): string {
  // Before anything is attempted the line says what will happen; afterwards, what did.
  const what = e.outcome === "planned" || e.outcome === "kept" ? e.action : e.outcome;
  const error = e.error ? ` (${e.error})` : "";
  return visible(`${what.padEnd(8)} ${objectText(e)}: ${e.reason}${error}`);
}

export function planSummary(receipt: Receipt): string {
  const t = tally(receipt);
  return `${t.planned} legacy object(s) to delete, ${t.kept} to keep, in ${describeScope(receipt.scope)} (plus the cluster-scoped names)`;
}

export function receiptSummary(t: Tally): string {
  const parts = [
    `${t.deleted} deleted`,
    `${t.alreadyGone} already gone`,
    `${t.changed} changed since planned (kept)`,
    `${t.failed} failed`,
    ...(t.notAttempted > 0 ? [`${t.notAttempted} not attempted`] : []),
    `${t.kept} kept by a guard`,
  ];
  return parts.join(", ");
}

export interface ReportMeta {
  runId: string;
  dryRun: boolean;
  /** A plan (nothing deleted yet or dry run) or the receipt of a deleting run. */
  stage: "plan" | "receipt";
}

/** The -o json document. */
export function toJson(receipt: Receipt, meta: ReportMeta): Record<string, unknown> {
  return {
    kind: meta.stage === "plan" ? "LegacyCleanupPlan" : "LegacyCleanupReceipt",
    runId: meta.runId,
    dryRun: meta.dryRun,
    scope: receipt.scope.allNamespaces
      ? { allNamespaces: true }
      : { allNamespaces: false, namespaces: receipt.scope.namespaces },
    summary: tally(receipt),
    objects: receipt.entries.map((e) => ({
      kind: e.kind,
      ...(e.namespace ? { namespace: e.namespace } : {}),
      name: e.name,
      uid: e.uid,
      resourceVersion: e.resourceVersion,
      action: e.action,
      reason: e.reason,
      outcome: e.outcome,
      ...(e.error ? { error: e.error } : {}),
    })),
  };
}

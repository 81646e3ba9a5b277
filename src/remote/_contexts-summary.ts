import { errorMessage, isAicrError } from "../core/errors.ts";
import { visible } from "../core/terminal.ts";

/** What the summary reads of one context's outcome (contexts.ts's ContextOutcome). */
type Outcome<T> = { context: string; server: string; durationMs: number } & (
  | { status: "ok"; value: T }
  | { status: "failed" | "canceled"; error: unknown }
);

/** One line of the summary, as the table shows it and a JSON log line carries it. */
export interface ContextSummaryRow {
  context: string;
  server: string;
  status: "ok" | "failed" | "canceled";
  /** Seconds, one decimal. */
  durationS: number;
  /** On success: where the result went. */
  output?: string;
  /** On failure: the error's code (UNSTRUCTURED for an untyped one) and message. */
  code?: string;
  error?: string;
}

/** The summary's rows, in the contexts' order; `describe` says where a success went (pure). */
export function summaryRows<T>(
  outcomes: readonly Outcome<T>[],
  describe: (value: T) => string,
): ContextSummaryRow[] {
  return outcomes.map((o) => {
    const base = {
      context: o.context,
      server: o.server,
      status: o.status,
      durationS: Math.round(o.durationMs / 100) / 10,
    };
    if (o.status === "ok") return { ...base, output: describe(o.value) };
    return {
      ...base,
      code: isAicrError(o.error) ? o.error.code : "UNSTRUCTURED",
      error: errorMessage(o.error),
    };
  });
}

/**
 * The text table: CONTEXT, SERVER, STATUS, DURATION, RESULT (the output, or `[CODE] message`), columns
 * padded to their widest cell, then one line `N of M contexts succeeded` (pure). Names, servers,
 * outputs and errors (a kubeconfig's, an apiserver's text) are made visible (core/terminal.ts).
 */
export function renderContextsTable(rows: readonly ContextSummaryRow[]): string {
  const header = ["CONTEXT", "SERVER", "STATUS", "DURATION", "RESULT"];
  const cells = rows.map((r) => [
    visible(r.context),
    visible(r.server) || "-",
    r.status,
    `${r.durationS.toFixed(1)}s`,
    visible(r.status === "ok" ? (r.output ?? "") : `[${r.code}] ${(r.error ?? "").split("\n")[0]}`),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? "").length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  const ok = rows.filter((r) => r.status === "ok").length;
  return [line(header), ...cells.map(line), `${ok} of ${rows.length} contexts succeeded`].join("\n");
}

/**
 * Several clusters in one invocation: the same work run against each kubeconfig context at once,
 * each with its own client and a logger that names it. One context's failure is recorded and does
 * not stop the others; the invocation's cancel signal reaches every one (each cleans up itself).
 * Generic over the work (a single-node snapshot today; a fleet run can be passed the same way).
 */
import { AicrError, errorMessage, isAicrError } from "../core/errors.ts";
import { childLogger, type Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";

export { contextFileNames, sanitizeContextFileName } from "./_contexts-files.ts";
export { type ContextSummaryRow, renderContextsTable, summaryRows } from "./_contexts-summary.ts";

/** A context to run against: its name, and the server its kubeconfig names (for the summary). */
export interface ContextTarget {
  name: string;
  server: string;
}

interface OutcomeBase {
  context: string;
  /** The client's server once connected, else the kubeconfig's. */
  server: string;
  durationMs: number;
}

export type ContextOutcome<T> =
  | (OutcomeBase & { status: "ok"; value: T })
  | (OutcomeBase & { status: "failed" | "canceled"; error: unknown });

export interface RunPerContextOptions {
  /** The invocation's logger: each context gets a child with a `context` field and a `[name]` tag. */
  log: Logger;
  /** The invocation's cancel signal, shared by every context's work. */
  signal: AbortSignal;
  /** A client for one context (its own connection, credentials and server). */
  connect: (context: string) => Promise<KubeClient>;
  /** The clock, for durations (tests pass their own). */
  now?: () => number;
}

/** The logger of one context's lines: `context=<name>` on JSON lines, `[<name>]` before text lines. */
export const contextLogger = (log: Logger, context: string): Logger =>
  childLogger(log, { fields: { context }, tag: `[${context}]` });

/**
 * Runs `work` against every context concurrently and resolves, once all have settled, with one
 * outcome per context in the order given. A failure is logged on that context's logger.
 */
export async function runPerContext<T>(
  contexts: readonly ContextTarget[],
  work: (client: KubeClient, context: string, log: Logger) => Promise<T>,
  options: RunPerContextOptions,
): Promise<ContextOutcome<T>[]> {
  const now = options.now ?? Date.now;
  return Promise.all(
    contexts.map(async (target): Promise<ContextOutcome<T>> => {
      const log = contextLogger(options.log, target.name);
      const started = now();
      let server = target.server;
      try {
        if (options.signal.aborted) throw options.signal.reason;
        const client = await options.connect(target.name);
        server = client.server || server;
        const value = await work(client, target.name, log);
        return { context: target.name, server, durationMs: now() - started, status: "ok", value };
      } catch (error) {
        const status = options.signal.aborted ? "canceled" : "failed";
        if (status === "failed") log.error(describeFailure(error), failureFields(error));
        return { context: target.name, server, durationMs: now() - started, status, error };
      }
    }),
  );
}

const describeFailure = (err: unknown): string => errorMessage(err);

function failureFields(err: unknown): Record<string, unknown> {
  if (!isAicrError(err)) return {};
  return { code: err.code, ...(err.remedy ? { remedy: err.remedy } : {}) };
}

/**
 * The invocation's outcome once every context has settled: undefined when all succeeded; the
 * cancel reason when cancelled; the single context's own error when only one ran; otherwise INTERNAL
 * (exit 8) "N of M contexts failed", naming them.
 */
export function contextsFailure<T>(outcomes: readonly ContextOutcome<T>[], signal: AbortSignal): unknown {
  const failed = outcomes.filter((o) => o.status !== "ok");
  if (failed.length === 0) return undefined;
  if (signal.aborted) return signal.reason;
  const [only] = outcomes;
  if (outcomes.length === 1 && only && only.status !== "ok") return only.error;
  const names = failed.map((o) => o.context);
  return new AicrError(
    "INTERNAL",
    `${failed.length} of ${outcomes.length} contexts failed: ${names.join(", ")}`,
    {
      remedy:
        "see each context's error above and the summary table; the other contexts' snapshots were written",
      context: { failed: names },
    },
  );
}

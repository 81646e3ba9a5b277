import { unlessAborted } from "../core/async.ts";
import { type Deadline, MAX_TIMER_MS, startDeadline } from "../core/deadline.ts";
import { AicrError } from "../core/errors.ts";
import { createLogger, type Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import { toAicrError } from "../kube/errors.ts";
import { NoAnswerError } from "../kube/http.ts";
import type { ReceiptRow } from "./cleanup.ts";
import { type RunIdentity, runLabels } from "./labels.ts";
import { createProgress, type Progress, terminalStatus } from "./progress.ts";
import { generateInvocationId, generateRunId } from "./run-id.ts";
import { type KeptObject, RunScope, type RunScopeOptions } from "./scope.ts";

/** What every step of an open run works with: its identity, its one deadline, its progress. */
export interface OpenRun {
  readonly identity: RunIdentity;
  /** The run labels every object of the run carries (run/labels.ts), made once here. */
  readonly labels: Readonly<Record<string, string>>;
  readonly client: KubeClient;
  /** The run's logger: a line through it first erases the terminal's status line. */
  readonly log: Logger;
  /** The run's one deadline: the caller's cancel, --timeout, or a fail-fast cause. */
  readonly signal: AbortSignal;
  readonly deadline: Deadline;
  readonly progress: Progress;
}

export interface RunSteps<Plan, Gate, T> {
  /** Names from the identity, with the run's labels: pure, so a bad name is refused before any request. */
  plan: (identity: RunIdentity, labels: Readonly<Record<string, string>>) => Plan;
  /** Everything read-only before the first write (permissions, a free run ID, targets). */
  gate: (run: OpenRun, plan: Plan) => Promise<Gate>;
  /** Fields of the "permissions checked" line. */
  gateFields?: ((gate: Gate) => Record<string, unknown>) | undefined;
  /** The run scope's own parts: the removing command, the staging ConfigMap, how cleanup is said. */
  scope: (
    run: OpenRun,
    plan: Plan,
    gate: Gate,
  ) => Pick<RunScopeOptions, "removeCommand" | "staging" | "announce">;
  /** What the run does: a node's agent, a fleet's agents, a validation's checks. */
  execute: (run: OpenRun & { scope: RunScope }, plan: Plan, gate: Gate) => Promise<T>;
}

export interface RunOptions {
  client: KubeClient;
  /** Where the run talks (stderr in the CLI); default: silent. */
  log?: Logger | undefined;
  /** Cancels the run (cleanup still runs); default: never. */
  signal?: AbortSignal | undefined;
  /** Defaults to a fresh one: concurrent runs in one process never share an ID. */
  runId?: string | undefined;
  /** The invocation's ID (the run context's); defaults to a fresh one. It goes on every object. */
  invocationId?: string | undefined;
  /** --timeout: the whole run, from the permission gate to the last result. */
  timeoutMs: number;
  /** When the run's time began, if before this call (validate's capture and checks share it). */
  startedAt?: number | undefined;
  /** What the TIMEOUT says did not finish, and what to do. */
  timeout: { what: string; remedy: string };
  /** false: --no-cleanup. */
  cleanup: boolean;
  /** The run's app.kubernetes.io/component label; default: the snapshot agent's. */
  component?: string | undefined;
  /** How messages name the run's objects: "" (a snapshot run) or e.g. "validation". */
  noun?: string | undefined;
  /** How often a wait says what it waits for; default AICR_PROGRESS_INTERVAL_MS, else 10 s. */
  progressIntervalMs?: number | undefined;
  /** Waiting lines as one updating line on a terminal's stderr (the CLI unless its log is JSON). */
  statusLine?: boolean | undefined;
}

/** What a caller of a run (the SDK's collectSnapshot, collectFleet) may set besides its own options. */
export type RunCallerOptions = Pick<
  RunOptions,
  "client" | "log" | "signal" | "runId" | "invocationId" | "startedAt" | "progressIntervalMs" | "statusLine"
> & {
  /**
   * Refuse, before anything is written, a run ID whose objects still stand. Default: when `runId` is
   * given. A generated one (64 random bits) cannot be in use, so it costs no look-up.
   */
  checkRunId?: boolean | undefined;
};

export interface RunOutcome<T> {
  runId: string;
  value: T;
  /** What cleanup did; empty with cleanup off. */
  receipt: ReceiptRow[];
  /** What was kept with cleanup off. */
  kept: KeptObject[];
}

/**
 * Opens one run and carries it to its end, for a node's snapshot, a fleet and a validation alike:
 * identity → plan (before any request) → one deadline → progress → gate → run scope → execute →
 * teardown (cleanup and its receipt, or the kept list, on every path). The callers differ only in
 * what their steps do.
 */
export async function withRun<Plan, Gate, T>(
  options: RunOptions,
  steps: RunSteps<Plan, Gate, T>,
): Promise<RunOutcome<T>> {
  const { client, timeoutMs } = options;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS))
    throw new AicrError(
      "INVALID_REQUEST",
      `invalid timeoutMs ${timeoutMs}: expected a positive number of at most ${MAX_TIMER_MS} (about 24 days)`,
      { context: { field: "--timeout" } },
    );
  const log = options.log ?? createLogger({ write: () => {} });
  const cancel = options.signal ?? new AbortController().signal;
  const identity: RunIdentity = {
    runId: options.runId ?? generateRunId(),
    invocationId: options.invocationId ?? generateInvocationId(),
  };
  const labels = runLabels(identity, options.component);
  const plan = steps.plan(identity, labels);
  // One bound for the whole run, the gate and every wait included. A server that has not answered
  // anything by then is reported as silent, not slow.
  using deadline = startDeadline(cancel, timeoutMs, {
    ...options.timeout,
    flag: "--timeout",
    startedAt: options.startedAt,
    instead: () => {
      // Requests still waiting for the kubeconfig's credential plugin: it, not the server, held the run.
      const plugin = client.pendingPlugin;
      if (plugin)
        return new AicrError(
          "UNAUTHORIZED",
          `--timeout ran out while the kubeconfig's exec credential plugin ${plugin} was still running: no request was sent`,
          {
            remedy:
              "run the plugin yourself (or kubectl get ns with the same kubeconfig) to see what it waits for — a login prompt, a network it cannot reach — then try again",
            context: { plugin },
          },
        );
      return client.answered
        ? undefined
        : toAicrError(new NoAnswerError(timeoutMs), "waiting for the API server", client.server);
    },
  });
  // Declared after the deadline, so disposed before it: no timer of the run outlives it.
  using progress = createProgress({
    log,
    remainingMs: () => deadline.remainingMs(),
    intervalMs: options.progressIntervalMs,
    status: options.statusLine ? terminalStatus() : undefined,
  });
  const run: OpenRun = {
    identity,
    labels,
    client,
    log: progress.log,
    signal: deadline.signal,
    deadline,
    progress,
  };
  progress.wait("checking permissions");
  const gate = await unlessAborted(steps.gate(run, plan), run.signal);
  progress.phase("permissions checked", steps.gateFields?.(gate));
  const scope = new RunScope({
    client,
    identity,
    log: progress.log,
    cleanup: options.cleanup,
    noun: options.noun,
    ...steps.scope(run, plan, gate),
  });
  let value: T;
  {
    // Teardown on every path out of this block.
    await using _ = scope;
    try {
      value = await steps.execute({ ...run, scope }, plan, gate);
    } finally {
      progress.idle(); // teardown's line counts its own time
    }
  }
  // Cancelled during cleanup: still a cancelled run, nothing is delivered.
  cancel.throwIfAborted();
  return { runId: identity.runId, value, receipt: scope.receipt, kept: scope.kept };
}

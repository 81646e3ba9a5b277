import { AicrError } from "./errors.ts";

/** The longest timer the runtime keeps (2^31-1 ms, about 24.8 days): a longer one would fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The run's one deadline, as Go's context.WithTimeout: one AbortSignal that aborts on the caller's
 * cancel signal or when the time is up. Every wait and request of the run takes only this signal;
 * the TIMEOUT error is made here and nowhere else.
 */
export interface Deadline extends Disposable {
  readonly signal: AbortSignal;
  /** Milliseconds left (at least 1 while running). */
  remainingMs(): number;
  /** Ends the run early with `reason` (a fail-fast cause): the signal aborts with it. */
  fail(reason: unknown): void;
}

type TimeoutOptions = { remedy: string; context?: Record<string, unknown> | undefined; cause?: unknown };

/** The one constructor of a TIMEOUT: every other kind below is made through it. */
class Timeout extends AicrError {
  constructor(message: string, o: TimeoutOptions) {
    super("TIMEOUT", message, o);
  }
}

/** The TIMEOUT a deadline aborts with. `where` says what the run was doing when time ran out. */
export class DeadlineExceeded extends Timeout {
  constructor(
    readonly o: { what: string; timeoutMs: number; remedy: string; flag?: string | undefined },
    where?: string,
  ) {
    super(
      `${o.what} within ${o.flag ? `${o.flag} ` : ""}${formatDuration(o.timeoutMs)}${where ? `: ${where}` : ""}`,
      { remedy: o.remedy, context: { timeoutMs: o.timeoutMs } },
    );
  }

  /** The same deadline, saying where the run stood. */
  at(where: string): DeadlineExceeded {
    return new DeadlineExceeded(this.o, where);
  }
}

export interface DeadlineOptions {
  /** What did not finish, e.g. "the agent did not finish" (the message adds "within 1m"). */
  what: string;
  remedy: string;
  /** The flag that set the time, named in the message ("within --timeout 1m"). */
  flag?: string | undefined;
  /**
   * Replaces the TIMEOUT when time runs out, e.g. a server that never answered is SERVICE_UNAVAILABLE
   * rather than slow. Return undefined to keep the TIMEOUT.
   */
  instead?: (() => Error | undefined) | undefined;
  /**
   * When the run's time began (Date.now()), if before this call: the deadline ends at startedAt +
   * timeoutMs and its message still says timeoutMs (validate's capture and checks share one --timeout).
   */
  startedAt?: number | undefined;
}

/**
 * A TIMEOUT that is not a deadline's own abort (an agent Job the cluster stopped at its
 * activeDeadlineSeconds, a cleanup that outlived its bound, a report's timed-out checks): made here too,
 * so every TIMEOUT of aicr comes from this file.
 */
export function timedOut(message: string, o: TimeoutOptions): AicrError {
  return new Timeout(message, o);
}

export function startDeadline(parent: AbortSignal, timeoutMs: number, o: DeadlineOptions): Deadline {
  const own = new AbortController();
  const end = (o.startedAt ?? Date.now()) + timeoutMs;
  const timer = setTimeout(
    () => own.abort(o.instead?.() ?? new DeadlineExceeded({ ...o, timeoutMs })),
    Math.max(0, end - Date.now()),
  );
  const signal = AbortSignal.any([parent, own.signal]);
  return {
    signal,
    remainingMs: () => Math.max(1, end - Date.now()),
    fail: (reason) => {
      if (!own.signal.aborted) own.abort(reason);
    },
    [Symbol.dispose]: () => clearTimeout(timer),
  };
}

/** 90000 → "1m30s"; 2000 → "2s"; 1500 → "1500ms" (as --timeout is written). */
export function formatDuration(ms: number): string {
  if (ms % 1000 !== 0) return `${ms}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  const rest = s % 60;
  if (m < 60) return rest ? `${m}m${rest}s` : `${m}m`;
  const h = Math.floor(m / 60);
  return `${h}h${m % 60 ? `${m % 60}m` : ""}${rest ? `${rest}s` : ""}`;
}

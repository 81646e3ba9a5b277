import { formatDuration } from "../core/deadline.ts";
import type { Logger } from "../core/log.ts";

/** How often a wait says what it waits for. */
export const PROGRESS_INTERVAL_MS = 10_000;

/**
 * The interval of waiting lines: AICR_PROGRESS_INTERVAL_MS (a test and debug knob, milliseconds)
 * when it is a positive number, else 10 s.
 */
export function progressIntervalMs(env: Record<string, string | undefined> = process.env): number {
  const n = Number(env.AICR_PROGRESS_INTERVAL_MS ?? Number.NaN);
  return Number.isFinite(n) && n > 0 ? n : PROGRESS_INTERVAL_MS;
}

/** Erases the terminal's current line: carriage return, then clear to the end of the line. */
const CLEAR_LINE = "\r\x1b[K";

const seconds = (ms: number): string => `${(Math.max(0, ms) / 1000).toFixed(1)}s`;

/** A span in whole seconds as --timeout is written ("4m40s"), at least "1s"; `up` rounds up. */
export function formatSpan(ms: number, up = false): string {
  const s = (up ? Math.ceil : Math.round)(Math.max(0, ms) / 1000);
  return formatDuration(Math.max(1, s) * 1000);
}

/** "pod x running on gpu-node-1 (0.4s; 1.2s in all)": the step's own time, then the run's. */
export function formatPhase(text: string, stepMs: number, totalMs: number): string {
  return `${text} (${seconds(stepMs)}; ${seconds(totalMs)} in all)`;
}

/** "waiting for the agent pod to start: pod x is Pending, container waiting: ContainerCreating; 4m40s left" */
export function formatWaiting(o: { what: string; saw?: string | undefined; leftMs: number }): string {
  return `${o.what}${o.saw ? `: ${o.saw}` : ""}; ${formatSpan(o.leftMs, true)} left`;
}

/** "agent in pod x running, quiet for 10s; 4m40s left" */
export function formatQuiet(o: { what: string; quietMs: number; leftMs: number }): string {
  return formatWaiting({ what: `${o.what}, quiet for ${formatSpan(o.quietMs)}`, leftMs: o.leftMs });
}

/**
 * The single updating status line's sink: stderr when it is a terminal that takes escapes. Otherwise
 * none: waiting lines are log lines. (The caller asks for it only when its log is not JSON lines.)
 */
export function terminalStatus(): ((chunk: string) => void) | undefined {
  if (!process.stderr.isTTY || process.env.TERM === "dumb") return undefined;
  return (chunk) => void process.stderr.write(chunk);
}

export interface ProgressOptions {
  log: Logger;
  /** Milliseconds left before the run's deadline. */
  remainingMs: () => number;
  /** Default: progressIntervalMs(). */
  intervalMs?: number | undefined;
  /** A terminal: waiting lines replace each other on one line here instead of being logged. */
  status?: ((chunk: string) => void) | undefined;
}

export interface WaitOptions {
  /** What the wait last saw (a pod's state), read when a line is due. */
  saw?: (() => string | undefined) | undefined;
  /** A line only after this long without `heard()` (a quiet agent), instead of every interval. */
  quiet?: boolean | undefined;
}

export interface Progress extends Disposable {
  /** The run's logger: a line through it first erases the status line. */
  readonly log: Logger;
  /** A step done: its own time and the run's. Ends the current wait. */
  phase(text: string, fields?: Record<string, unknown>): void;
  /**
   * From now until the next wait, phase or stop: a line every interval saying what the run waits for
   * (`what` read when the line is due when it is a function, as a fleet's counts are).
   */
  wait(what: string | (() => string), o?: WaitOptions): void;
  /** On a terminal, the current wait's line drawn again now (a fleet's node finished); else nothing. */
  refresh(): void;
  /** Milliseconds since the run's progress began. */
  elapsedMs(): number;
  /** Something was said (an agent log line): a quiet wait's clock starts again. */
  heard(): void;
  /** No wait: the timer is cleared and the status line erased. */
  stop(): void;
  /** A step ends without a line (a run that failed): the next phase's own time counts from here. */
  idle(): void;
}

/** Phase lines with per-step and total times, and waiting lines while the run waits. */
export function createProgress(o: ProgressOptions): Progress {
  const start = performance.now();
  let stepStart = start;
  const intervalMs = o.intervalMs ?? progressIntervalMs();
  let current: { what: string | (() => string); saw?: WaitOptions["saw"]; quiet: boolean } | undefined;
  let lastHeard = start;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let shown = false;

  const erase = () => {
    if (!shown) return;
    shown = false;
    o.status?.(CLEAR_LINE);
  };
  const show = (text: string) => {
    if (o.status) {
      o.status(`${CLEAR_LINE}${text}`);
      shown = true;
    } else o.log.info(text);
  };
  const disarm = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  const arm = (ms: number) => {
    disarm();
    timer = setTimeout(tick, ms);
    // The run's own waits keep the process alive; this timer never does.
    (timer as { unref?: () => void }).unref?.();
  };
  function tick(): void {
    timer = undefined;
    const w = current;
    if (!w) return;
    const leftMs = o.remainingMs();
    const what = typeof w.what === "function" ? w.what() : w.what;
    if (w.quiet) {
      const quietMs = performance.now() - lastHeard;
      if (quietMs < intervalMs) {
        arm(intervalMs - quietMs);
        return;
      }
      show(formatQuiet({ what, quietMs, leftMs }));
    } else show(formatWaiting({ what, saw: w.saw?.(), leftMs }));
    arm(intervalMs);
  }
  const stop = () => {
    current = undefined;
    disarm();
    erase();
  };
  const through =
    (level: keyof Logger) =>
    (message: unknown, fields?: Record<string, unknown>): void => {
      erase();
      o.log[level](message, fields);
    };
  const log: Logger = {
    error: through("error"),
    warn: through("warn"),
    info: through("info"),
    debug: through("debug"),
  };
  return {
    log,
    phase(text, fields) {
      stop();
      const now = performance.now();
      o.log.info(formatPhase(text, now - stepStart, now - start), fields ?? {});
      stepStart = now;
    },
    wait(what, w = {}) {
      erase();
      current = { what, saw: w.saw, quiet: Boolean(w.quiet) };
      lastHeard = performance.now();
      arm(intervalMs);
    },
    heard() {
      lastHeard = performance.now();
    },
    refresh() {
      if (o.status && current && !current.quiet) tick();
    },
    elapsedMs: () => performance.now() - start,
    stop,
    idle() {
      stop();
      stepStart = performance.now();
    },
    [Symbol.dispose]: stop,
  };
}

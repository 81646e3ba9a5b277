/**
 * The few async primitives aicr needs, each honouring a cancel signal: a wait never outlives the run
 * that asked for it. Every timer here is cleared when its promise settles.
 */

/** Resolves after `ms`; rejects with the signal's reason as soon as it aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Settles with `p`, or rejects with the signal's reason as soon as it aborts: a wait whose request is
 * stuck on a slow apiserver must not keep a cancelled (or failed-fast) run waiting. `p` is still
 * observed, so its later rejection is never unhandled.
 */
export function unlessAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    p.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      p.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/** Settles with `p`, or rejects with `onTimeout()` after `ms`. */
export function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return runWithTimeout(() => p, { ms, onTimeout });
}

export interface TimeLimit {
  ms: number;
  /** The reason of the timeout, made when it passes. */
  onTimeout: () => Error;
  /** The caller's cancel signal: its abort ends the work with its own reason. */
  signal?: AbortSignal | undefined;
}

/**
 * Runs `work` with a signal that aborts when `o.signal` does or when `o.ms` pass (reason
 * `onTimeout()`), and rejects with that reason at once, even if the work ignores its signal (the
 * abort tells well-behaved work to stop; the rejection ends the wait for the rest). Work is not
 * started at all under a signal that has already aborted.
 */
export async function runWithTimeout<T>(work: (signal: AbortSignal) => Promise<T>, o: TimeLimit): Promise<T> {
  o.signal?.throwIfAborted();
  const bound = new AbortController();
  const onAbort = (): void => bound.abort(o.signal?.reason);
  o.signal?.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => bound.abort(o.onTimeout()), o.ms);
  try {
    return await unlessAborted(work(bound.signal), bound.signal);
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener("abort", onAbort);
  }
}

export interface RetryOptions {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Whether a failure is worth another attempt; the last failure is thrown as is. */
  retryable: (err: unknown) => boolean;
  /** The pause before attempt `attempt + 1` (attempt counts from 1), given the failure. */
  backoffMs: (attempt: number, err: unknown) => number;
  signal?: AbortSignal | undefined;
  /** Told of each failure that will be retried. */
  onRetry?: ((attempt: number, err: unknown, pauseMs: number) => void) | undefined;
}

/**
 * Calls `fn` until it succeeds, a failure is not retryable, or the attempts are spent. The signal is
 * honoured between attempts: once it aborts, no attempt starts and no pause is kept; the retry rejects
 * with the signal's reason (a failure that would not be retried anyway is still thrown as is).
 */
export async function retry<T>(fn: (attempt: number) => Promise<T>, o: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    o.signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= o.attempts || !o.retryable(err)) throw err;
      o.signal?.throwIfAborted();
      const pause = o.backoffMs(attempt, err);
      o.onRetry?.(attempt, err, pause);
      await delay(pause, o.signal);
    }
  }
}

/**
 * Maps with at most `limit` calls in flight, results in input order. After the first failure nothing
 * new is started (the call has already failed: an unreachable server would otherwise be asked every
 * remaining question, one wave after another) and that failure is thrown once the calls in flight end.
 * A cancel signal starts nothing new either: its reason is then the failure.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
  signal?: AbortSignal,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failure) {
      const i = next++;
      try {
        signal?.throwIfAborted();
        out[i] = await fn(items[i] as T, i);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  if (failure) throw failure.err;
  return out;
}

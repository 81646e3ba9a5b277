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
export async function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  const expired = new AbortController();
  const timer = setTimeout(() => expired.abort(onTimeout()), ms);
  try {
    return await unlessAborted(p, expired.signal);
  } finally {
    clearTimeout(timer);
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

/** Calls `fn` until it succeeds, a failure is not retryable, or the attempts are spent. */
export async function retry<T>(fn: (attempt: number) => Promise<T>, o: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    o.signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= o.attempts || !o.retryable(err) || o.signal?.aborted) throw err;
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
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
  signal?: AbortSignal,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < items.length && !failed) {
      signal?.throwIfAborted();
      const i = next++;
      try {
        out[i] = await fn(items[i] as T, i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

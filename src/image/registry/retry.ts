/**
 * Bounded retries of one whole push step (a blob upload restarts with a fresh upload session, so a
 * half-sent PATCH is never resumed blind). Only 5xx, 429 and dropped connections are retried.
 */
import type { Logger } from "../../core/log.ts";
import { isRetryable } from "./errors.ts";
import { cancelled } from "./http.ts";

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** The first pause; each later one doubles. */
  baseDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 500 };

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(cancelled(signal));
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelled(signal));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });

export async function withRetries<T>(
  what: string,
  policy: RetryPolicy,
  signal: AbortSignal,
  log: Logger,
  step: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (signal.aborted) throw cancelled(signal);
      if (attempt >= policy.attempts || !isRetryable(err)) throw err;
      const delay = policy.baseDelayMs * 2 ** (attempt - 1);
      log.warn(
        `${what}: ${(err as Error).message}; retrying in ${delay} ms (${attempt}/${policy.attempts - 1})`,
      );
      await sleep(delay, signal);
    }
  }
}

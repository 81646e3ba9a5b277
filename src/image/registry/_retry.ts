/**
 * Bounded retries of one whole push step (a blob upload restarts with a fresh upload session, so a
 * half-sent PATCH is never resumed blind). Only 5xx, 429 and dropped connections are retried.
 */
import { retry } from "../../core/async.ts";
import type { Logger } from "../../core/log.ts";
import { isRetryable } from "./_errors.ts";
import { cancelled } from "./_http.ts";

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** The first pause; each later one doubles. */
  baseDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 500 };

/** Once the signal aborts, the step rejects as CANCELED, whatever it failed with itself. */
export async function withRetries<T>(
  what: string,
  policy: RetryPolicy,
  signal: AbortSignal,
  log: Logger,
  step: () => Promise<T>,
): Promise<T> {
  try {
    return await retry(step, {
      attempts: policy.attempts,
      retryable: isRetryable,
      backoffMs: (attempt) => policy.baseDelayMs * 2 ** (attempt - 1),
      signal,
      onRetry: (attempt, err, pause) =>
        log.warn(
          `${what}: ${(err as Error).message}; retrying in ${pause} ms (${attempt}/${policy.attempts - 1})`,
        ),
    });
  } catch (err) {
    if (signal.aborted) throw cancelled(signal);
    throw err;
  }
}

/**
 * A read's outcome as data — the object, its absence, or why it could not be read — so a check's
 * verdict is a pure function of what it read, and one failed read becomes one reported issue instead
 * of ending the check.
 */
import { runWithTimeout } from "../../core/async.ts";
import { AicrError } from "../../core/errors.ts";
import { isNotFound } from "../../kube/errors.ts";

export type Outcome<T> =
  | { state: "found"; value: T }
  | { state: "absent" }
  | { state: "error"; message: string };

export const found = <T>(value: T): Outcome<T> => ({ state: "found", value });
export const absent: Outcome<never> = { state: "absent" };
export const readError = (message: string): Outcome<never> => ({ state: "error", message });

/** The error's own words (an AicrError from the client already says what was being read). */
export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Runs one read: its value, `absent` for undefined or a NotFound answer, else the error's text. With
 * `boundMs`, a read without an answer by then is an error too (the original's per-resource bound).
 */
export async function readOutcome<T>(
  read: () => Promise<T | undefined>,
  o: { boundMs?: number; signal?: AbortSignal; what?: string } = {},
): Promise<Outcome<T>> {
  try {
    const value =
      o.boundMs === undefined
        ? await read()
        : await runWithTimeout(() => read(), {
            ms: o.boundMs,
            signal: o.signal,
            onTimeout: () =>
              new AicrError(
                "TIMEOUT",
                `${o.what ?? "the read"}: no answer within ${Math.round(o.boundMs ?? 0) / 1000} s`,
              ),
          });
    return value === undefined ? absent : found(value);
  } catch (err) {
    if (isNotFound(err)) return absent;
    return readError(errorText(err));
  }
}

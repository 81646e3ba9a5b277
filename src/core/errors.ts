/**
 * The one typed error of aicr. Every failure that reaches `main` carries a code, and only `main`
 * turns that code into an exit status (see EXIT_CODES).
 */

export const EXIT_CODES = {
  INVALID_REQUEST: 2,
  CONFLICT: 2,
  NOT_FOUND: 3,
  UNAUTHORIZED: 4,
  TIMEOUT: 5,
  SERVICE_UNAVAILABLE: 6,
  RATE_LIMIT_EXCEEDED: 7,
  INTERNAL: 8,
  CANCELED: 9,
} as const;

export type ErrorCode = keyof typeof EXIT_CODES;

/** Exit status for an error that carries no code (a bug, or a library throwing something unexpected). */
export const UNSTRUCTURED_EXIT = 1;

export interface AicrErrorOptions {
  /** What the operator can do about it, in one sentence. */
  remedy?: string;
  /** Structured fields for logs (never secrets). */
  context?: Record<string, unknown>;
  cause?: unknown;
}

export class AicrError extends Error {
  override readonly name = "AicrError";
  readonly code: ErrorCode;
  readonly remedy: string | undefined;
  readonly context: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: AicrErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.remedy = options.remedy;
    this.context = options.context ?? {};
  }

  get exitCode(): number {
    return EXIT_CODES[this.code];
  }
}

export function isAicrError(err: unknown): err is AicrError {
  return err instanceof AicrError;
}

/**
 * Not a failure of aicr but an outcome with its own exit status, such as a validator reporting
 * "failed" (1) or "skipped" (2) to the Job that runs it. main logs the message as information.
 */
export class ExitStatus extends Error {
  override readonly name = "ExitStatus";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The exit status main uses for any thrown value. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof ExitStatus) return err.status;
  return isAicrError(err) ? err.exitCode : UNSTRUCTURED_EXIT;
}

/** `[CODE] message: cause` plus the remedy on its own line, as the operator reads it on stderr. */
export function formatError(err: unknown): string {
  if (!isAicrError(err)) return errorMessage(err);
  const remedy = err.remedy ? `\n  remedy: ${err.remedy}` : "";
  return `[${err.code}] ${errorMessage(err)}${remedy}`;
}

/** `message: cause` alone — no code, no remedy (a JSON log line carries those as fields of their own). */
export function errorMessage(err: unknown): string {
  if (!isAicrError(err)) return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
  return `${err.message}${cause}`;
}

export const invalid = (message: string, options?: AicrErrorOptions): AicrError =>
  new AicrError("INVALID_REQUEST", message, options);

/** A list inside an error message: one `  - item` line each, after the heading's colon. */
export const bulletList = (items: readonly string[]): string => items.map((i) => `\n  - ${i}`).join("");

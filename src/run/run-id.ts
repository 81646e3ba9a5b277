import { AicrError } from "../core/errors.ts";

/** `YYYYMMDD-HHMMSS-<16 lowercase hex>`: sortable by time, unguessable by the random tail. */
export const RUN_ID_PATTERN = /^[0-9]{8}-[0-9]{6}-[0-9a-f]{16}$/;
export const RUN_ID_LENGTH = 32;

const pad = (n: number, width = 2): string => String(n).padStart(width, "0");

function randomHex(bytes: number): string {
  const buf = new Uint8Array(bytes);
  crypto.getRandomValues(buf);
  return Array.from(buf, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A fresh run ID from the UTC clock and the CSPRNG. */
export function generateRunId(now: Date = new Date()): string {
  const date = `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}`;
  const time = `${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}${pad(now.getUTCSeconds())}`;
  return `${date}-${time}-${randomHex(8)}`;
}

/** Invocation IDs prove authorship ("this process created it"); they are never taken from outside. */
export function generateInvocationId(): string {
  return randomHex(8);
}

/**
 * The run ID for this invocation: `--run-id`, else AICR_RUN_ID, else a fresh one.
 * An override must have exactly the generated shape, so every run-scoped name stays within budget.
 */
export function resolveRunId(options: {
  flag?: string | undefined;
  env?: string | undefined;
  now?: Date;
}): string {
  const [source, value] =
    options.flag !== undefined && options.flag !== ""
      ? ["--run-id", options.flag]
      : options.env !== undefined && options.env !== ""
        ? ["AICR_RUN_ID", options.env]
        : [undefined, undefined];
  if (source === undefined || value === undefined) return generateRunId(options.now);
  if (!RUN_ID_PATTERN.test(value)) {
    throw new AicrError("INVALID_REQUEST", `invalid run ID from ${source}: ${JSON.stringify(value)}`, {
      remedy: `use the form YYYYMMDD-HHMMSS-<16 lowercase hex>, e.g. ${generateRunId(options.now)}, or omit ${source} to generate one`,
      context: { field: source, value },
    });
  }
  return value;
}

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
  const problem = runIdProblem(value);
  if (problem) {
    throw new AicrError(
      "INVALID_REQUEST",
      `invalid run ID from ${source}: ${JSON.stringify(value)}${problem === "form" ? "" : `: ${problem}`}`,
      {
        remedy: `use the form YYYYMMDD-HHMMSS-<16 lowercase hex> (a real UTC date and time), e.g. ${generateRunId(options.now)}, or omit ${source} to generate one`,
        context: { field: source, value },
      },
    );
  }
  return value;
}

/**
 * Why `value` is not a run ID aicr could have generated: "form" (not YYYYMMDD-HHMMSS-<16 hex>), or
 * the date or time that does not exist (month 13, February 30, 24:00:00); undefined when it is one.
 */
export function runIdProblem(value: string): string | undefined {
  if (!RUN_ID_PATTERN.test(value)) return "form";
  const n = (from: number, to: number) => Number(value.slice(from, to));
  const [year, month, day, hour, minute, second] = [
    n(0, 4),
    n(4, 6),
    n(6, 8),
    n(9, 11),
    n(11, 13),
    n(13, 15),
  ];
  // setUTC* carry an overflow into the next field (month 13 → January): a real time reads back the same.
  // (Date.UTC would also read the years 0000–0099 as 1900–1999.)
  const when = new Date(0);
  when.setUTCFullYear(year, month - 1, day);
  when.setUTCHours(hour, minute, second, 0);
  const same =
    when.getUTCFullYear() === year &&
    when.getUTCMonth() === month - 1 &&
    when.getUTCDate() === day &&
    when.getUTCHours() === hour &&
    when.getUTCMinutes() === minute &&
    when.getUTCSeconds() === second;
  if (same) return undefined;
  return `${value.slice(0, 8)}-${value.slice(9, 15)} is no UTC date and time (YYYYMMDD-HHMMSS)`;
}

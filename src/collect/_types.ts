import type { Logger } from "../core/log.ts";
import type { Measurement, MeasurementType, Readings } from "../snapshot/schema.ts";

export type Env = Readonly<Record<string, string | undefined>>;

/** What every node collector receives; nothing below reads process.env or the real filesystem root. */
export interface CollectorOptions {
  /** Host filesystem prefix (`AICR_HOST_ROOT`, default `/`); every host file is read beneath it. */
  hostRoot: string;
  /** Environment for PATH lookups and child processes. */
  env: Env;
  signal: AbortSignal;
  log: Logger;
}

export type { Measurement, MeasurementType, Readings };

/** Throws the signal's reason when the collector's time is up, so partial data is never reported. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason ?? new Error("aborted");
}

export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

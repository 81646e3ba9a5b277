import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CollectorOptions } from "../../../src/collect/_types.ts";
import { createLogger, type Logger } from "../../../src/core/log.ts";

export const FIXTURES = join(import.meta.dir, "../../fixtures");
export const HOSTS = join(FIXTURES, "hosts");
export const BIN = join(FIXTURES, "bin");

/** PATH with a fixture bin directory first and the system tools the fake scripts use after it. */
export function pathWith(...binDirs: string[]): string {
  return [...binDirs.map((d) => join(BIN, d)), "/usr/bin", "/bin"].join(":");
}

export interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

export function captureLog(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = createLogger({ json: true, debug: true, write: (l) => lines.push(JSON.parse(l) as LogLine) });
  return { log, lines };
}

export function collectorOptions(
  hostRoot: string,
  overrides: Partial<CollectorOptions> = {},
): CollectorOptions {
  return {
    hostRoot,
    env: { PATH: pathWith() },
    signal: new AbortController().signal,
    log: captureLog().log,
    ...overrides,
  };
}

export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "aicr-collect-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

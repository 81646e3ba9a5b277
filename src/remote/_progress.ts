import type { Logger } from "../core/log.ts";

/** Phase lines with the time since the run started: the operator sees where a slow run spends it. */
export function createProgress(log: Logger): {
  phase: (text: string, fields?: Record<string, unknown>) => void;
} {
  const start = performance.now();
  return {
    phase(text, fields) {
      const elapsed = ((performance.now() - start) / 1000).toFixed(1);
      log.info(`${text} (${elapsed}s)`, fields ?? {});
    },
  };
}

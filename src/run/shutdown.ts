/**
 * What a run would leave behind if the process died now. main.ts prints these on a second
 * SIGINT/SIGTERM, just before it exits at once.
 */
const reporters = new Set<() => string | undefined>();

export function onForcedExit(report: () => string | undefined): () => void {
  reporters.add(report);
  return () => reporters.delete(report);
}

export function forcedExitReports(): string[] {
  return [...reporters].map((r) => r()).filter((s): s is string => Boolean(s));
}

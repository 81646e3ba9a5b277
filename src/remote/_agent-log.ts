import { Writable } from "node:stream";
import type { Logger } from "../core/log.ts";

const KEEP_LINES = 50;
const LEVELS = new Set(["error", "warn", "info", "debug"]);

/**
 * Relays the agent pod's log (JSON lines) through our logger with an `[agent]` prefix, and keeps
 * the last lines for the failure report.
 */
export function agentLogRelay(
  log: Logger,
  onLine?: () => void,
): { out: Writable; lastLines: () => string[] } {
  const last: string[] = [];
  let pending = "";
  const emit = (line: string) => {
    if (line.trim() === "") return;
    onLine?.();
    last.push(line);
    if (last.length > KEEP_LINES) last.shift();
    try {
      const {
        level,
        msg,
        time: _time,
        ...fields
      } = JSON.parse(line) as { level?: string; msg?: string; time?: string };
      const method = LEVELS.has(level ?? "") ? (level as "error" | "warn" | "info" | "debug") : "info";
      log[method](`[agent] ${msg ?? ""}`, fields);
    } catch {
      log.info(`[agent] ${line}`);
    }
  };
  const out = new Writable({
    write(chunk, _enc, cb) {
      pending += chunk.toString();
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const l of lines) emit(l);
      cb();
    },
    final(cb) {
      emit(pending);
      pending = "";
      cb();
    },
  });
  return { out, lastLines: () => [...last] };
}

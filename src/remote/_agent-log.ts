import { Writable } from "node:stream";
import type { Logger } from "../core/log.ts";
import { visible, visibleLines } from "../core/terminal.ts";

const KEEP_LINES = 50;
const LEVELS = new Set(["error", "warn", "info", "debug"]);

/** A relayed field with every string in it (keys too) made visible. */
const shown = (value: unknown): unknown => {
  if (typeof value === "string") return visible(value);
  if (Array.isArray(value)) return value.map(shown);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [visible(k), shown(v)]));
  return value;
};

/**
 * Relays the agent pod's log (JSON lines) through our logger with an `[agent]` prefix, and keeps
 * the last lines for the failure report. The pod's log is not ours to trust (a reading, a node's own
 * output may be in it): its message, fields and kept lines are made visible (core/terminal.ts; a
 * message keeps its line breaks) before they reach the operator's terminal. The relay does not know
 * the logger's mode: with --log-json a line carries the escaped text too.
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
    last.push(visible(line));
    if (last.length > KEEP_LINES) last.shift();
    try {
      const {
        level,
        msg,
        time: _time,
        ...fields
      } = JSON.parse(line) as { level?: string; msg?: string; time?: string };
      const method = LEVELS.has(level ?? "") ? (level as "error" | "warn" | "info" | "debug") : "info";
      log[method](`[agent] ${visibleLines(String(msg ?? ""))}`, shown(fields) as Record<string, unknown>);
    } catch {
      log.info(`[agent] ${visible(line)}`);
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

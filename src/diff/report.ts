import { needsEscape, quoted, visible } from "../core/terminal.ts";
import { typeOfPath } from "../snapshot/readings.ts";
import type { Reading } from "../snapshot/schema.ts";
import { type Change, countChanges, type DiffSummary } from "./compare.ts";

/** The -o json|yaml document: for tools. */
export interface DiffDocument {
  baselineSource: string;
  targetSource: string;
  changes: Change[];
  summary: DiffSummary;
}

export function diffDocument(baselineSource: string, targetSource: string, changes: Change[]): DiffDocument {
  return { baselineSource, targetSource, changes, summary: countChanges(changes) };
}

const MARK = { added: "+", removed: "-", changed: "~" } as const;
const COLOR = { added: 32, removed: 31, changed: 33 } as const;

/**
 * A value as the report shows it: bare when unambiguous; quoted (core/terminal.ts's `quoted`: a JSON
 * string) when empty, padded, or holding a quote, a backslash or a character a terminal would obey —
 * so a bare value is always literal and an escape only ever appears inside quotes.
 */
export function showValue(value: Reading | null): string {
  if (value === null) return "<nil>";
  if (typeof value !== "string") return String(value);
  return value === "" || value.trim() !== value || value.includes('"') || needsEscape(value)
    ? quoted(value)
    : value;
}

function line(c: Change): string {
  const path = visible(c.path);
  if (c.kind === "added") return `${MARK.added} ${path}: ${showValue(c.target)}`;
  if (c.kind === "removed") return `${MARK.removed} ${path}: ${showValue(c.baseline)}`;
  return `${MARK.changed} ${path}: ${showValue(c.baseline)} -> ${showValue(c.target)}`;
}

export const summaryLine = (s: DiffSummary): string =>
  s.total === 0
    ? "no drift: 0 changes"
    : `drift: ${s.total} change(s): ${s.added} added, ${s.removed} removed, ${s.modified} modified`;

/**
 * The text report (pure): a header naming both sides, the changes grouped by measurement type with
 * +/-/~ markers, and a summary line. `color` paints the markers' lines (the caller decides: a TTY and
 * no NO_COLOR). Every name, path and value is made visible (core/terminal.ts) before it is painted.
 */
export function renderText(doc: DiffDocument, color = false): string {
  const paint = (code: number, s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
  const out = [`baseline: ${visible(doc.baselineSource)}`, `target:   ${visible(doc.targetSource)}`, ""];
  let group: string | undefined;
  for (const c of doc.changes) {
    const type = visible(typeOfPath(c.path));
    if (type !== group) {
      out.push(color ? `\x1b[1m${type}\x1b[0m` : type);
      group = type;
    }
    out.push(`  ${paint(COLOR[c.kind], line(c))}`);
  }
  if (doc.changes.length > 0) out.push("");
  out.push(summaryLine(doc.summary));
  return `${out.join("\n")}\n`;
}

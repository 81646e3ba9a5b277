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

/** A value as the report shows it: bare when unambiguous, quoted when empty or padded or multi-line. */
export function showValue(value: Reading | null): string {
  if (value === null) return "<nil>";
  if (typeof value !== "string") return String(value);
  return value === "" || value.trim() !== value || /[\n\t"]/.test(value) ? JSON.stringify(value) : value;
}

function line(c: Change): string {
  if (c.kind === "added") return `${MARK.added} ${c.path}: ${showValue(c.target)}`;
  if (c.kind === "removed") return `${MARK.removed} ${c.path}: ${showValue(c.baseline)}`;
  return `${MARK.changed} ${c.path}: ${showValue(c.baseline)} -> ${showValue(c.target)}`;
}

export const summaryLine = (s: DiffSummary): string =>
  s.total === 0
    ? "no drift: 0 changes"
    : `drift: ${s.total} change(s): ${s.added} added, ${s.removed} removed, ${s.changed} changed`;

/**
 * The text report (pure): a header naming both sides, the changes grouped by measurement type with
 * +/-/~ markers, and a summary line. `color` paints the markers' lines (the caller decides: a TTY and
 * no NO_COLOR).
 */
export function renderText(doc: DiffDocument, color = false): string {
  const paint = (code: number, s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
  const out = [`baseline: ${doc.baselineSource}`, `target:   ${doc.targetSource}`, ""];
  let group: string | undefined;
  for (const c of doc.changes) {
    const type = typeOfPath(c.path);
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

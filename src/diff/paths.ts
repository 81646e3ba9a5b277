import type { Reading, Snapshot, Subtype } from "../snapshot/schema.ts";

/**
 * Reading paths, the contract diff reports in (pure):
 *   <Type>.<subtype>.<key>                     a reading
 *   <Type>.<subtype>.context.<key>             the subtype's context
 *   <Type>.<subtype>.items.length              how many item records
 *   <Type>.<subtype>.items[<i>].context.<key>  an item's context (items by position)
 *   <Type>.<subtype>.items[<i>].data.<key>     an item's reading
 * A reading key that could be read as one of the other forms (`context`, `items`, or starting with
 * `context.`, `items.`, `items[`) is bracket-quoted: <Type>.<subtype>["context.node"].
 */

const RESERVED = /^(context|items)$|^(context\.|items\.|items\[)/;

/** The path segment of a reading key: `.key`, or `["key"]` when it would be mistaken for context/items. */
export const keySegment = (key: string): string =>
  RESERVED.test(key) ? `[${JSON.stringify(key)}]` : `.${key}`;

/** Every reading path of a subtype, with its value (an item count is a number). */
function subtypeReadings(base: string, s: Subtype, into: Map<string, Reading>): void {
  const put = (path: string, value: Reading) => {
    if (!into.has(path)) into.set(path, value);
  };
  for (const [key, value] of Object.entries(s.data)) put(`${base}${keySegment(key)}`, value);
  for (const [key, value] of Object.entries(s.context ?? {})) put(`${base}.context.${key}`, value);
  if (s.items === undefined) return;
  put(`${base}.items.length`, s.items.length);
  s.items.forEach((item, i) => {
    for (const [key, value] of Object.entries(item.context ?? {}))
      put(`${base}.items[${i}].context.${key}`, value);
    for (const [key, value] of Object.entries(item.data)) put(`${base}.items[${i}].data.${key}`, value);
  });
}

/**
 * The snapshot's readings by path. metadata and the envelope are not readings: they never appear. A
 * subtype named twice in one measurement reads as its first (as constraint look-ups do).
 */
export function readingsByPath(doc: Snapshot): Map<string, Reading> {
  const out = new Map<string, Reading>();
  for (const m of doc.measurements) {
    const seen = new Set<string>();
    for (const s of m.subtypes) {
      if (seen.has(s.subtype)) continue;
      seen.add(s.subtype);
      subtypeReadings(`${m.type}.${s.subtype}`, s, out);
    }
  }
  return out;
}

/** The measurement type a path belongs to (its first segment). */
export const typeOfPath = (path: string): string => path.slice(0, path.indexOf("."));

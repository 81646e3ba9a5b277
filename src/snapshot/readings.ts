import { nearest } from "../core/suggest.ts";
import type { Reading, Snapshot, Subtype } from "./schema.ts";

/**
 * Reading paths (pure): the one grammar of validate's constraints, --template's `reading` and diff.
 *   <Type>.<subtype>.<key>                     a reading (the key may hold dots and slashes)
 *   <Type>.<subtype>.context.<key>             the subtype's context
 *   <Type>.<subtype>.items.length              how many item records
 *   <Type>.<subtype>.items[<i>].context.<key>  an item's context (items by position)
 *   <Type>.<subtype>.items[<i>].data.<key>     an item's reading
 * A reading key that could be read as one of the other forms (`context`, `items`, or starting with
 * `context.`, `items.`, `items[`) is bracket-quoted: <Type>.<subtype>["context.node"]. A subtype
 * name may hold dots (SystemD's `kubelet.service`): a look-up tries each subtype the path starts with.
 */

/**
 * Where a path's key is read in its subtype: its readings (no `in`), its context, its items (the
 * key `length`: how many), or one item's context or readings.
 */
export type ReadingPlace = "context" | "items" | { item: number; of: "context" | "data" };

export interface ReadingPath {
  type: string;
  subtype: string;
  key: string;
  in?: ReadingPlace;
}

type Tail = Omit<ReadingPath, "type" | "subtype">;

const RESERVED = /^(context|items)$|^(context\.|items\.|items\[)/;
const ITEM = /^\.items\[(\d+)\]\.(context|data)\.([\s\S]*)$/;

/** The path segment of a reading key: `.key`, or `["key"]` when it would be mistaken for context/items. */
export const keySegment = (key: string): string =>
  RESERVED.test(key) ? `[${JSON.stringify(key)}]` : `.${key}`;

/** The part of a path after its subtype's name (`.gpu-count`, `.context.node`, `["items"]`, …). */
function parseTail(tail: string): Tail | undefined {
  if (tail.startsWith("[")) {
    try {
      const quoted: unknown = JSON.parse(tail);
      return Array.isArray(quoted) && quoted.length === 1 && typeof quoted[0] === "string"
        ? { key: quoted[0] }
        : undefined;
    } catch {
      return undefined;
    }
  }
  if (!tail.startsWith(".")) return undefined;
  if (tail.startsWith(".context.")) return { key: tail.slice(".context.".length), in: "context" };
  if (tail === ".items.length") return { key: "length", in: "items" };
  const item = ITEM.exec(tail);
  if (item)
    return {
      key: item[3] ?? "",
      in: { item: Number(item[1]), of: item[2] === "context" ? "context" : "data" },
    };
  const key = tail.slice(1);
  return RESERVED.test(key) ? undefined : { key };
}

/**
 * Splits `<Type>.<subtype><rest>`. The subtype is the one named (for a name with dots), else the
 * segment up to the next `.` or `[`; undefined when the path names nothing readable.
 */
export function splitPath(path: string, subtype?: string): ReadingPath | undefined {
  const dot = path.indexOf(".");
  if (dot <= 0) return undefined;
  const rest = path.slice(dot + 1);
  const name = subtype ?? /^[^.[]*/.exec(rest)?.[0] ?? "";
  if (name === "" || !rest.startsWith(name)) return undefined;
  const ref = parseTail(rest.slice(name.length));
  return ref && { type: path.slice(0, dot), subtype: name, ...ref };
}

const own = (map: Record<string, Reading> | undefined, key: string): Reading | undefined =>
  map && Object.hasOwn(map, key) ? map[key] : undefined;

function readAt(s: Subtype, { key, in: place }: Tail): Reading | undefined {
  if (place === undefined) return own(s.data, key);
  if (place === "context") return own(s.context, key);
  if (place === "items") return s.items?.length;
  const item = s.items?.[place.item];
  return own(place.of === "context" ? item?.context : item?.data, key);
}

/** Each measurement's subtypes, each name once: a subtype named twice reads as its first. */
function* subtypes(doc: Snapshot): Generator<{ base: string; s: Subtype }> {
  for (const m of doc.measurements) {
    const seen = new Set<string>();
    for (const s of m.subtypes) {
      if (seen.has(s.subtype)) continue;
      seen.add(s.subtype);
      yield { base: `${m.type}.${s.subtype}`, s };
    }
  }
}

/**
 * The reading a path names (an item count is a number); undefined when the snapshot has none. Where
 * a path could name two readings, the first in the document wins, as in readingsByPath.
 */
export function lookupReading(doc: Snapshot, path: string): Reading | undefined {
  for (const { base, s } of subtypes(doc)) {
    if (!path.startsWith(base)) continue;
    const ref = splitPath(path, s.subtype);
    const tail = path.slice(base.length);
    // A reading key written unquoted (`.context.node` for the key "context.node") is still found.
    const value = (ref && readAt(s, ref)) ?? (tail.startsWith(".") ? own(s.data, tail.slice(1)) : undefined);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** The reading as text, as constraints compare it. */
export function readingText(doc: Snapshot, path: string): string | undefined {
  const value = lookupReading(doc, path);
  return value === undefined ? undefined : String(value);
}

/** Every reading path of a subtype, with its value. */
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
 * The snapshot's readings by path, in document order. metadata and the envelope are not readings:
 * they never appear. Where two readings share a path, the first in the document holds it (as in a look-up).
 */
export function readingsByPath(doc: Snapshot): Map<string, Reading> {
  const out = new Map<string, Reading>();
  for (const { base, s } of subtypes(doc)) subtypeReadings(base, s, out);
  return out;
}

/** Every reading path the snapshot holds. */
export const readingPaths = (doc: Snapshot): string[] => [...readingsByPath(doc).keys()];

/** The measurement type a path belongs to (its first segment). */
export const typeOfPath = (path: string): string => path.slice(0, path.indexOf("."));

/**
 * The known path closest to `name` (case-insensitive; the smaller path on a tie), when it is close
 * enough to be a plausible typo: within two edits, or a third of the name's length if that is more.
 */
export function nearestPath(name: string, paths: readonly string[]): string | undefined {
  const byLower = new Map<string, string>();
  for (const path of [...paths].sort())
    if (!byLower.has(path.toLowerCase())) byLower.set(path.toLowerCase(), path);
  const hit = nearest(name.toLowerCase(), byLower.keys(), Math.max(2, Math.floor(name.length / 3)));
  return hit === undefined ? undefined : byLower.get(hit);
}

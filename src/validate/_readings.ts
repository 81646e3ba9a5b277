import type { Snapshot } from "../snapshot/schema.ts";

/** `<Type>.<subtype>.<key>`, split on the first two dots only: the key may hold dots and slashes. */
export function splitPath(name: string): { type: string; subtype: string; key: string } | undefined {
  const first = name.indexOf(".");
  const second = first < 0 ? -1 : name.indexOf(".", first + 1);
  if (first <= 0 || second <= first + 1 || second === name.length - 1) return undefined;
  return { type: name.slice(0, first), subtype: name.slice(first + 1, second), key: name.slice(second + 1) };
}

/** The first measurement of the type, its first subtype of that name, the exact key; as text. */
export function lookupReading(snapshot: Snapshot, name: string): string | undefined {
  const path = splitPath(name);
  if (!path) return undefined;
  const measurement = snapshot.measurements.find((m) => m.type === path.type);
  const subtype = measurement?.subtypes.find((s) => s.subtype === path.subtype);
  const value = subtype?.data[path.key];
  return value === undefined ? undefined : String(value);
}

/** Every reading path the snapshot holds, for suggestions. */
export function knownPaths(snapshot: Snapshot): string[] {
  const out: string[] = [];
  for (const m of snapshot.measurements)
    for (const s of m.subtypes)
      for (const key of Object.keys(s.data)) out.push(`${m.type}.${s.subtype}.${key}`);
  return out;
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/**
 * The known path closest to `name` (case-insensitive edit distance), when it is close enough to be a
 * plausible typo: at most a third of the name's length.
 */
export function nearestPath(name: string, paths: readonly string[]): string | undefined {
  let best: { path: string; d: number } | undefined;
  const lower = name.toLowerCase();
  for (const path of paths) {
    const d = distance(lower, path.toLowerCase());
    if (!best || d < best.d || (d === best.d && path < best.path)) best = { path, d };
  }
  return best && best.d <= Math.max(2, Math.floor(name.length / 3)) ? best.path : undefined;
}

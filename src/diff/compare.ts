import { parseVersion, sameVersion } from "../core/versions.ts";
import { readingsByPath } from "../snapshot/readings.ts";
import type { Reading, Snapshot } from "../snapshot/schema.ts";

export type ChangeKind = "added" | "removed" | "changed";

export interface Change {
  path: string;
  kind: ChangeKind;
  /** The baseline's value; null when the reading was added. */
  baseline: Reading | null;
  /** The target's value; null when the reading was removed. */
  target: Reading | null;
}

/** The counts by kind; a changed reading is counted as `modified`, the key the original's summary uses. */
export interface DiffSummary {
  added: number;
  removed: number;
  modified: number;
  total: number;
}

/**
 * Two readings are the same when they read the same as text (as constraints read them), or when both
 * are versions and the same version (core/versions.ts: `v1.33.4` = `1.33.4`, `1.33` = `1.33.0`).
 */
export function sameReading(a: Reading, b: Reading): boolean {
  const x = String(a);
  const y = String(b);
  if (x === y) return true;
  const va = parseVersion(x);
  const vb = parseVersion(y);
  return va !== undefined && vb !== undefined && sameVersion(va, vb);
}

/** The readings that differ, sorted by path (pure); metadata never takes part. */
export function diffSnapshots(
  baseline: Snapshot,
  target: Snapshot,
  ignored: (path: string) => boolean = () => false,
): Change[] {
  const a = readingsByPath(baseline);
  const b = readingsByPath(target);
  const changes: Change[] = [];
  for (const [path, value] of a) {
    if (ignored(path)) continue;
    const other = b.get(path);
    if (other === undefined) changes.push({ path, kind: "removed", baseline: value, target: null });
    else if (!sameReading(value, other))
      changes.push({ path, kind: "changed", baseline: value, target: other });
  }
  for (const [path, value] of b) {
    if (!a.has(path) && !ignored(path)) changes.push({ path, kind: "added", baseline: null, target: value });
  }
  return changes.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

/** How many readings were added, removed and modified (changed): the report's summary. */
export function countChanges(changes: readonly Change[]): DiffSummary {
  const count = (kind: ChangeKind) => changes.filter((c) => c.kind === kind).length;
  return {
    added: count("added"),
    removed: count("removed"),
    modified: count("changed"),
    total: changes.length,
  };
}

import { parseVersion } from "../core/versions.ts";
import { readingsByPath } from "../snapshot/readings.ts";
import type { Reading, Snapshot } from "../snapshot/schema.ts";
import { isNodeSpecificByValue, isNodeSpecificPath } from "./node-specific.ts";

/**
 * Fleet drift (pure): for every reading path whose value is not the same on all nodes, the groups of
 * nodes that agree. Values are equal as `aicr diff` decides (compare.ts sameReading): the same text,
 * or the same version (`v1.33.4` = `1.33.4`, `1.33` = `1.33.0`). A reading a node lacks puts that
 * node in the absent group (value null).
 */

export interface FleetNode {
  name: string;
  snapshot: Snapshot;
}

export interface ValueGroup {
  /** The group's value as its first node (by name) wrote it; null: the reading is absent there. */
  value: Reading | null;
  count: number;
  /** Sorted by name. */
  nodes: string[];
  /** Set on the baseline's group (it comes first, even with no fleet node in it). */
  baseline?: true;
}

export interface FleetDrift {
  path: string;
  groups: ValueGroup[];
}

export interface FleetBaseline {
  /** A fleet node's name, or the path of a snapshot file outside the fleet. */
  name: string;
  snapshot: Snapshot;
  /** True when the baseline is one of the fleet's nodes. */
  member: boolean;
}

export interface FleetOptions {
  /** --ignore: leave these paths out (on top of the node-specific rule). */
  ignored?: (path: string) => boolean;
  baseline?: FleetBaseline;
}

export interface FleetSummary {
  /** Readings that drift. */
  readings: number;
  /** Nodes in the fleet. */
  nodes: number;
  /** Nodes outside the first group (the majority's, or the baseline's) of at least one reading. */
  differing: number;
  /** Paths left out by the node-specific rule (node-specific.ts). */
  nodeSpecific: number;
  /** Paths left out by --ignore. */
  ignored: number;
}

export interface FleetResult {
  nodes: string[];
  drift: FleetDrift[];
  summary: FleetSummary;
}

/** The equality class of a reading, as sameReading decides: a version by its three components. */
export function readingKey(value: Reading): string {
  const text = String(value);
  const v = parseVersion(text);
  if (v === undefined) return `s:${text}`;
  const [a = 0, b = 0, c = 0] = v.parts;
  return `v:${a}.${b}.${c}${v.suffix}`;
}

const ABSENT = "\u0000absent";
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Majority first; ties by the value's text, the absent group last. The baseline's group leads. */
function orderGroups(groups: ValueGroup[]): ValueGroup[] {
  const text = (g: ValueGroup) => (g.value === null ? "\uffff" : String(g.value));
  return groups.sort(
    (x, y) =>
      Number(Boolean(y.baseline)) - Number(Boolean(x.baseline)) ||
      y.count - x.count ||
      byText(text(x), text(y)) ||
      byText(x.nodes[0] ?? "", y.nodes[0] ?? ""),
  );
}

/** One path's groups over the nodes (sorted by name); undefined when every node agrees. */
function groupPath(
  path: string,
  names: readonly string[],
  readings: readonly Map<string, Reading>[],
  baseline: { value: Reading | undefined; member: boolean } | undefined,
): FleetDrift | undefined {
  const byKey = new Map<string, ValueGroup>();
  names.forEach((node, i) => {
    const value = readings[i]?.get(path);
    const key = value === undefined ? ABSENT : readingKey(value);
    const group = byKey.get(key);
    if (group) {
      group.count++;
      group.nodes.push(node);
    } else byKey.set(key, { value: value ?? null, count: 1, nodes: [node] });
  });
  if (baseline) {
    const key = baseline.value === undefined ? ABSENT : readingKey(baseline.value);
    const group = byKey.get(key) ?? { value: baseline.value ?? null, count: 0, nodes: [] };
    if (!baseline.member) group.value = baseline.value ?? null;
    group.baseline = true;
    byKey.set(key, group);
  }
  if (byKey.size <= 1) return undefined;
  return { path, groups: orderGroups([...byKey.values()]) };
}

/** The drift across the fleet, sorted by path; node names must be unique (fleet-source.ts checks). */
export function fleetDrift(fleet: readonly FleetNode[], options: FleetOptions = {}): FleetResult {
  const nodes = [...fleet].sort((a, b) => byText(a.name, b.name));
  const names = nodes.map((n) => n.name);
  const readings = nodes.map((n) => readingsByPath(n.snapshot));
  const base = options.baseline;
  const baseReadings = base && !base.member ? readingsByPath(base.snapshot) : undefined;
  const paths = new Set<string>();
  for (const r of [...readings, ...(baseReadings ? [baseReadings] : [])])
    for (const p of r.keys()) paths.add(p);

  const drift: FleetDrift[] = [];
  let nodeSpecific = 0;
  let ignored = 0;
  for (const path of [...paths].sort(byText)) {
    if (isNodeSpecificPath(path)) {
      nodeSpecific++;
      continue;
    }
    if (options.ignored?.(path)) {
      ignored++;
      continue;
    }
    const baseValue = base ? (baseReadings ?? readings[names.indexOf(base.name)])?.get(path) : undefined;
    const entry = groupPath(path, names, readings, base && { value: baseValue, member: base.member });
    if (!entry) continue;
    const carried = names.flatMap((node, i) => {
      const value = readings[i]?.get(path);
      return value === undefined ? [] : [{ node, value }];
    });
    if (isNodeSpecificByValue(carried, readingKey)) {
      nodeSpecific++;
      continue;
    }
    drift.push(entry);
  }
  const differing = new Set<string>();
  for (const d of drift) for (const g of d.groups.slice(1)) for (const n of g.nodes) differing.add(n);
  return {
    nodes: names,
    drift,
    summary: {
      readings: drift.length,
      nodes: names.length,
      differing: differing.size,
      nodeSpecific,
      ignored,
    },
  };
}

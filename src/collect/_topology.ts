import type { Json, V1Node } from "../kube/types.ts";
import { type ClusterReader, forEachPage } from "./_k8s-source.ts";
import type { CollectorOptions, Measurement, Readings } from "./_types.ts";

export interface TopologyCollectorOptions extends CollectorOptions {
  cluster: ClusterReader;
  /** 0 = list every node. */
  maxNodesPerEntry: number;
}

/** Node names (sorted) per taint (key, effect, value) and per label (key, value). */
export interface TopologyTally {
  nodeCount: number;
  taints: Map<string, { key: string; effect: string; value: string; nodes: string[] }>;
  labels: Map<string, { key: string; value: string; nodes: string[] }>;
}

export function emptyTally(): TopologyTally {
  return { nodeCount: 0, taints: new Map(), labels: new Map() };
}

export function tallyNodes(nodes: readonly Json<V1Node>[], tally: TopologyTally): void {
  for (const node of nodes) {
    tally.nodeCount++;
    const name = node.metadata?.name ?? "";
    for (const t of node.spec?.taints ?? []) {
      const value = t.value ?? "";
      const id = JSON.stringify([t.key, t.effect, value]);
      const entry = tally.taints.get(id) ?? { key: t.key, effect: t.effect, value, nodes: [] };
      entry.nodes.push(name);
      tally.taints.set(id, entry);
    }
    for (const [key, value] of Object.entries(node.metadata?.labels ?? {})) {
      const id = JSON.stringify([key, value]);
      const entry = tally.labels.get(id) ?? { key, value, nodes: [] };
      entry.nodes.push(name);
      tally.labels.set(id, entry);
    }
  }
}

/** `a,b,c`, or with a limit of 2: `a,b (+1 more)`. */
export function formatNodeList(nodes: readonly string[], maxNodesPerEntry: number): string {
  const sorted = [...nodes].sort();
  if (maxNodesPerEntry <= 0 || sorted.length <= maxNodesPerEntry) return sorted.join(",");
  return `${sorted.slice(0, maxNodesPerEntry).join(",")} (+${sorted.length - maxNodesPerEntry} more)`;
}

function byFields<K extends string>(...fields: K[]): (a: Record<K, string>, b: Record<K, string>) => number {
  return (a, b) => {
    for (const f of fields) if (a[f] !== b[f]) return a[f] < b[f] ? -1 : 1;
    return 0;
  };
}

function countBy<T>(items: Iterable<T>, key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

/**
 * The reference encodings. Taint: key → `effect|value|nodes`, or `key.effect` → `value|nodes` when
 * the key occurs in several taints. Label: key → `value|nodes`, or `key.value` → `value|nodes` when
 * the key has several values. Entries are visited in sorted order so any collision resolves the same way.
 */
export function topologyMeasurement(tally: TopologyTally, maxNodesPerEntry: number): Measurement {
  const taints = [...tally.taints.values()].sort(byFields("key", "effect", "value"));
  const labels = [...tally.labels.values()].sort(byFields("key", "value"));
  const taintKeys = countBy(taints, (t) => t.key);
  const labelKeys = countBy(labels, (l) => l.key);
  const taintData: Readings = {};
  for (const t of taints) {
    const nodes = formatNodeList(t.nodes, maxNodesPerEntry);
    if ((taintKeys.get(t.key) ?? 0) > 1) taintData[`${t.key}.${t.effect}`] = `${t.value}|${nodes}`;
    else taintData[t.key] = `${t.effect}|${t.value}|${nodes}`;
  }
  const labelData: Readings = {};
  for (const l of labels) {
    const key = (labelKeys.get(l.key) ?? 0) > 1 ? `${l.key}.${l.value}` : l.key;
    labelData[key] = `${l.value}|${formatNodeList(l.nodes, maxNodesPerEntry)}`;
  }
  return {
    type: "NodeTopology",
    subtypes: [
      {
        subtype: "summary",
        data: { "node-count": tally.nodeCount, "taint-count": taints.length, "label-count": labels.length },
      },
      { subtype: "taint", data: taintData },
      { subtype: "label", data: labelData },
    ],
  };
}

/** NodeTopology over every node in the cluster, listed in pages of 500. */
export async function collectTopology(options: TopologyCollectorOptions): Promise<Measurement> {
  const tally = emptyTally();
  await forEachPage((page) => options.cluster.listNodesPage(page), {
    signal: options.signal,
    onItems: (nodes) => tallyNodes(nodes, tally),
  });
  return topologyMeasurement(tally, options.maxNodesPerEntry);
}

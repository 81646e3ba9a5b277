/**
 * The pure parts of a fleet run (`aicr snapshot --all-nodes`): which nodes, in what order, how each
 * ended (fleet.json), the progress line and the multi-document output. No I/O here.
 */
import { AicrError } from "../core/errors.ts";
import { formatSpan } from "../run/progress.ts";

/** How many agent Jobs run at once unless --parallelism says otherwise. */
export const DEFAULT_PARALLELISM = 8;

export interface FleetSelection {
  /** --sample N: N nodes, evenly spaced over the name-sorted set. */
  sample?: number | undefined;
  /** --max-nodes N: a set larger than this is refused before any write. */
  maxNodes?: number | undefined;
}

/** N of `sorted`, evenly spaced (the first always included); all of them when N ≥ their count. */
export function sampleEvenly<T>(sorted: readonly T[], n: number): T[] {
  if (n >= sorted.length) return [...sorted];
  return Array.from({ length: n }, (_, i) => sorted[Math.floor((i * sorted.length) / n)] as T);
}

/**
 * The target nodes, sorted by name, sampled, then checked against --max-nodes (refused with the
 * count, before anything is created); none at all is NOT_FOUND.
 */
export function selectFleetNodes(names: readonly string[], o: FleetSelection, selector: string): string[] {
  const sorted = [...new Set(names)].sort();
  if (sorted.length === 0)
    throw new AicrError(
      "NOT_FOUND",
      `no node matches the fleet's placement (${selector}): nothing was deployed`,
      {
        remedy:
          "pass --node-selector key=value naming labels your target nodes carry (kubectl get nodes --show-labels)",
        context: { selector },
      },
    );
  const picked = o.sample !== undefined ? sampleEvenly(sorted, o.sample) : sorted;
  if (o.maxNodes !== undefined && picked.length > o.maxNodes)
    throw new AicrError(
      "INVALID_REQUEST",
      `the fleet run would target ${picked.length} nodes (${selector}), more than --max-nodes ${o.maxNodes}: nothing was deployed`,
      {
        remedy: `raise --max-nodes to ${picked.length}, take --sample ${o.maxNodes}, or narrow --node-selector`,
        context: { field: "--max-nodes", nodes: picked.length, maxNodes: o.maxNodes },
      },
    );
  return picked;
}

export type NodeStatus = "ok" | "failed";

/** One node's line of fleet.json. */
export interface FleetNodeRecord {
  node: string;
  status: NodeStatus;
  job: string;
  /** ISO times: the Job's create was sent / the node's outcome was known. */
  started?: string | undefined;
  finished?: string | undefined;
  durationMs?: number | undefined;
  error?: { code: string; message: string } | undefined;
}

export interface FleetReport {
  kind: "FleetSnapshot";
  runId: string;
  nodes: number;
  ok: number;
  failed: number;
  results: FleetNodeRecord[];
}

/** fleet.json: the run, its counts, then one record per node in node-name order. */
export function fleetReport(runId: string, records: readonly FleetNodeRecord[]): FleetReport {
  const results = [...records].sort((a, b) => a.node.localeCompare(b.node));
  const failed = results.filter((r) => r.status === "failed").length;
  return {
    kind: "FleetSnapshot",
    runId,
    nodes: results.length,
    ok: results.length - failed,
    failed,
    results,
  };
}

/** The partial failure: every node's outcome is written first, then this ends the run (exit 8). */
export function fleetFailure(report: FleetReport): AicrError | undefined {
  if (report.failed === 0) return undefined;
  const names = report.results.filter((r) => r.status === "failed").map((r) => r.node);
  const shown = names.slice(0, 5).join(", ") + (names.length > 5 ? `, … (${names.length - 5} more)` : "");
  return new AicrError("INTERNAL", `${report.failed} of ${report.nodes} nodes failed: ${shown}`, {
    remedy:
      "read each failed node's error in fleet.json (or the log above); rerun on those nodes with --node-selector kubernetes.io/hostname=<node>",
    context: { failed: report.failed, nodes: report.nodes },
  });
}

/** A node name as a file name: Kubernetes node names are DNS subdomains, anything else is refused. */
export function nodeFileName(node: string, ext: "yaml" | "json"): string {
  if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(node) || node.length > 253)
    throw new AicrError("INTERNAL", `node name ${JSON.stringify(node)} cannot be a file name`, {
      remedy: "a Kubernetes node name is a DNS subdomain; check the cluster's Node objects",
    });
  return `${node}.${ext}`;
}

/** stdout without -o: one YAML stream, `---` before each node's document (node-name order). */
export function multiDocument(docs: readonly { node: string; content: string }[]): string {
  return [...docs]
    .sort((a, b) => a.node.localeCompare(b.node))
    .map((d) => `---\n${d.content.endsWith("\n") ? d.content : `${d.content}\n`}`)
    .join("");
}

export interface FleetCounts {
  total: number;
  done: number;
  failed: number;
  running: number;
}

/** "fleet: 40/64 done, 8 running, 14 pending, 2 failed; 12.0s so far, ETA 6s" */
export function formatFleetProgress(c: FleetCounts, elapsedMs: number): string {
  const finished = c.done + c.failed;
  const pending = Math.max(0, c.total - finished - c.running);
  const eta =
    finished === 0
      ? "ETA unknown"
      : finished === c.total
        ? "finished"
        : `ETA ${formatSpan((elapsedMs / finished) * (c.total - finished), true)}`;
  return `fleet: ${c.done}/${c.total} done, ${c.running} running, ${pending} pending, ${c.failed} failed; ${formatSpan(elapsedMs)} so far, ${eta}`;
}

import { visible } from "../core/terminal.ts";
import { typeOfPath } from "../snapshot/readings.ts";
import type { FleetDrift, FleetResult, FleetSummary, ValueGroup } from "./fleet.ts";
import { showValue } from "./report.ts";

/** The -o json|yaml document of `aicr diff --fleet` (every group lists all its nodes). */
export interface FleetDocument {
  source: string;
  /** The --baseline: a node's name or a snapshot file's path. */
  baseline?: string;
  nodes: string[];
  drift: FleetDrift[];
  summary: FleetSummary;
}

export function fleetDocument(source: string, result: FleetResult, baseline?: string): FleetDocument {
  return {
    source,
    ...(baseline === undefined ? {} : { baseline }),
    nodes: result.nodes,
    drift: result.drift,
    summary: result.summary,
  };
}

/** How many node names a text line shows before "+N more". */
export const SHOWN_NODES = 3;

/** `gpu-17, gpu-40, gpu-41`, or `gpu-01, gpu-02, gpu-03 +5 more` (each name made visible). */
export function nodeList(nodes: readonly string[], shown = SHOWN_NODES): string {
  const names = nodes.slice(0, shown).map(visible).join(", ");
  return nodes.length <= shown ? names : `${names} +${nodes.length - shown} more`;
}

const groupValue = (g: ValueGroup): string =>
  `${g.value === null ? "<absent>" : showValue(g.value)}${g.baseline ? " (baseline)" : ""}`;

/**
 * One line per drifting reading: the first group (the baseline's, else the majority's) as
 * "<value> on N of M nodes", its names only when it is not a strict majority; every other group as
 * "<value> on K: <names>".
 */
export function fleetLine(entry: FleetDrift, total: number): string {
  const [first, ...rest] = entry.groups;
  const path = visible(entry.path);
  if (!first) return path;
  const names = first.count > 0 && first.count * 2 <= total ? `: ${nodeList(first.nodes)}` : "";
  const parts = [`${groupValue(first)} on ${first.count} of ${total} nodes${names}`];
  for (const g of rest) parts.push(`${groupValue(g)} on ${g.count}: ${nodeList(g.nodes)}`);
  return `${path}: ${parts.join("; ")}`;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The summary: the report's last line and the --fail-on-drift error's message (a baseline made visible). */
export function fleetSummaryLine(s: FleetSummary, baselineName?: string): string {
  const baseline = baselineName === undefined ? undefined : visible(baselineName);
  const left =
    s.nodeSpecific > 0
      ? ` (${plural(s.nodeSpecific, "node-specific reading", "node-specific readings")} not compared)`
      : "";
  if (s.readings === 0) {
    const one = s.nodes === 1;
    const agree =
      baseline === undefined
        ? `${one ? "agrees" : "agree"} on every compared reading`
        : `${one ? "matches" : "match"} the baseline ${baseline}`;
    return `no drift: ${plural(s.nodes, "node", "nodes")} ${agree}${left}`;
  }
  const from = baseline === undefined ? "the majority" : `the baseline ${baseline}`;
  return (
    `${s.readings} ${s.readings === 1 ? "reading drifts" : "readings drift"} across ${plural(s.nodes, "node", "nodes")}: ` +
    `${plural(s.differing, "node differs", "nodes differ")} from ${from}${left}`
  );
}

/**
 * The text report (pure): the fleet and baseline named, lines grouped by measurement type, a summary.
 * Every name, path and value is made visible (core/terminal.ts) before it is painted.
 */
export function renderFleetText(doc: FleetDocument, color = false): string {
  const out = [`fleet:    ${visible(doc.source)} (${plural(doc.nodes.length, "node", "nodes")})`];
  if (doc.baseline !== undefined) out.push(`baseline: ${visible(doc.baseline)}`);
  out.push("");
  let group: string | undefined;
  for (const entry of doc.drift) {
    const type = visible(typeOfPath(entry.path));
    if (type !== group) {
      out.push(color ? `\x1b[1m${type}\x1b[0m` : type);
      group = type;
    }
    const line = fleetLine(entry, doc.nodes.length);
    out.push(`  ${color ? `\x1b[33m${line}\x1b[0m` : line}`);
  }
  if (doc.drift.length > 0) out.push("");
  out.push(fleetSummaryLine(doc.summary, doc.baseline));
  return `${out.join("\n")}\n`;
}

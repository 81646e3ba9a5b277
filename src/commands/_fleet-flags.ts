import { lstatSync } from "node:fs";
import { AicrError } from "../core/errors.ts";
import { checkFileDestination } from "../core/files.ts";
import { collectFleet, DEFAULT_PARALLELISM, fleetFailure } from "../remote/fleet.ts";
import { fleetStdout, writeFleetDir } from "../remote/fleet-output.ts";
import type { SnapshotRunOptions } from "../remote/options.ts";
import type { RunContext } from "../run/context.ts";
import type { Destination } from "../snapshot/deliver.ts";
import type { FlagSpecs } from "./_flag-spec.ts";
import { badFlag, parseDuration } from "./_parse.ts";

/** The fleet flags of aicr snapshot, spread into its args. */
export const fleetArgs = {
  "all-nodes": {
    type: "boolean",
    description:
      "One run over every target node (GPU nodes, or --node-selector): one agent Job per node; -o <dir>/",
  },
  parallelism: {
    type: "string",
    description: `--all-nodes: agent Jobs at once (default ${DEFAULT_PARALLELISM})`,
    valueHint: "n",
  },
  "max-nodes": {
    type: "string",
    description: "--all-nodes: refuse (nothing deployed) when more nodes than this would be targeted",
    valueHint: "n",
  },
  sample: {
    type: "string",
    description: "--all-nodes: only N nodes, evenly spaced over the name-sorted set",
    valueHint: "n",
  },
  "node-timeout": {
    type: "duration",
    description:
      "--all-nodes: the bound of each node's agent, within the run's --timeout (default: none, each node is bounded only by --timeout)",
  },
} as const satisfies FlagSpecs;

export type FleetOutput = { kind: "stdout" } | { kind: "dir"; path: string };

export interface FleetFlags {
  parallelism: number;
  maxNodes?: number | undefined;
  sample?: number | undefined;
  /** --node-timeout: each node's own bound (absent: only the run's --timeout). */
  nodeTimeoutMs?: number | undefined;
  output: FleetOutput;
}

const positive = (flag: string, value: string): number => {
  if (!/^[0-9]+$/.test(value) || Number(value) < 1 || Number(value) > 100_000)
    throw badFlag(flag, value, "a whole number from 1 to 100000");
  return Number(value);
};

const dirRemedy =
  "write a fleet to a directory: -o <dir>/ (one <node>.yaml each, plus fleet.json), or leave out -o for one multi-document YAML on stdout";

/**
 * The fleet's own flags and what a fleet cannot do, all checked before the first request: the counts,
 * an output that must be a directory (a trailing slash or an existing one; never a symlink; its parent
 * must exist when it does not), no cm:// (one ConfigMap cannot hold N nodes) and no table or template.
 */
export function resolveFleetFlags(f: {
  allNodes: boolean;
  parallelism?: string | undefined;
  maxNodes?: string | undefined;
  sample?: string | undefined;
  nodeTimeout?: string | undefined;
  output?: string | undefined;
  destination: Destination;
  presentation: unknown;
}): FleetFlags | undefined {
  if (!f.allNodes) {
    const stray = (["parallelism", "maxNodes", "sample", "nodeTimeout"] as const).find(
      (k) => f[k] !== undefined,
    );
    if (stray) {
      const flag = {
        parallelism: "--parallelism",
        maxNodes: "--max-nodes",
        sample: "--sample",
        nodeTimeout: "--node-timeout",
      }[stray];
      throw new AicrError("INVALID_REQUEST", `${flag} applies only to a fleet run`, {
        remedy: `add --all-nodes, or leave out ${flag}`,
        context: { field: flag },
      });
    }
    return undefined;
  }
  const parallelism =
    f.parallelism === undefined ? DEFAULT_PARALLELISM : positive("--parallelism", f.parallelism);
  const maxNodes = f.maxNodes === undefined ? undefined : positive("--max-nodes", f.maxNodes);
  const sample = f.sample === undefined ? undefined : positive("--sample", f.sample);
  const nodeTimeoutMs =
    f.nodeTimeout === undefined ? undefined : parseDuration("--node-timeout", f.nodeTimeout);
  if (f.presentation)
    throw new AicrError(
      "INVALID_REQUEST",
      "--all-nodes writes snapshots as YAML or JSON: -t table and --template are single-node views",
      {
        remedy: "pass -t yaml or -t json with --all-nodes",
        context: { field: "--format" },
      },
    );
  const d = f.destination;
  const counts = { parallelism, maxNodes, sample, nodeTimeoutMs };
  if (d.kind === "stdout") return { ...counts, output: { kind: "stdout" } };
  if (d.kind === "configmap")
    throw new AicrError(
      "INVALID_REQUEST",
      `invalid --output ${JSON.stringify(f.output)} with --all-nodes: a fleet is not written to a ConfigMap`,
      {
        remedy: dirRemedy,
        context: { field: "--output", value: f.output },
      },
    );
  return { ...counts, output: { kind: "dir", path: checkFleetDir(d.path) } };
}

/** The fleet's output directory, checked now: returns its path without the trailing slash. */
export function checkFleetDir(raw: string): string {
  const path = raw.replace(/\/+$/, "") || "/";
  const stat = (() => {
    try {
      return lstatSync(path);
    } catch {
      return undefined;
    }
  })();
  if (stat?.isSymbolicLink())
    throw badFlag(
      "--output",
      raw,
      "a directory, not a symlink (aicr never writes through a link)",
      dirRemedy,
    );
  if (stat && !stat.isDirectory()) throw badFlag("--output", raw, "a directory (it is a file)", dirRemedy);
  if (!stat && !raw.endsWith("/"))
    throw badFlag(
      "--output",
      raw,
      "a directory: end it with '/' (it is created) or name an existing one",
      dirRemedy,
    );
  // Absent: its parent must be a writable directory (the same checks as a file's); present: writable.
  checkFileDestination(stat ? `${path}/fleet.json` : path, "--output");
  return path;
}

/** aicr snapshot --all-nodes once its flags are checked: connect, run the fleet, write, exit status. */
export async function runFleetSnapshot(
  ctx: RunContext,
  options: Omit<SnapshotRunOptions, "destination"> & { destination: Destination },
  fleet: FleetFlags,
  writeStdout: (text: string) => void,
): Promise<void> {
  const client = await ctx.transport.connect();
  if (!client) throw new Error("the remote transport always yields a client");
  const { destination: _, format, ...rest } = options;
  const result = await collectFleet({
    ...rest,
    client,
    log: ctx.log,
    signal: ctx.signal,
    runId: ctx.runId,
    invocationId: ctx.invocationId,
    checkRunId: ctx.runIdGiven,
    statusLine: !ctx.logJson,
    parallelism: fleet.parallelism,
    maxNodes: fleet.maxNodes,
    sample: fleet.sample,
    nodeTimeoutMs: fleet.nodeTimeoutMs,
    format,
  });
  if (fleet.output.kind === "dir") {
    const n = await writeFleetDir(fleet.output.path, result.nodes, result.report, format);
    ctx.log.info(`fleet: ${n} node snapshot(s) and fleet.json written to ${fleet.output.path}/`);
  } else writeStdout(fleetStdout(result.nodes, format));
  const failure = fleetFailure(result.report);
  if (failure) throw failure;
}

import type { RunContext } from "../run/context.ts";
import { collectNodeSnapshot } from "../snapshot/collect-node.ts";
import { checkDestination, parseDestination } from "../snapshot/deliver.ts";
import { SNAPSHOT_FORMATS, type SnapshotFormat } from "../snapshot/serialize.ts";
import { badFlag, parseCount } from "./_parse.ts";

/** The flags of a node collection (the in-pod agent, `snapshot --local`), declared once. */
export const nodeArgs = {
  output: {
    type: "string",
    alias: "o",
    description: "stdout (default), a file path, or cm://<namespace>/<name>",
    valueHint: "dest",
  },
  format: { type: "string", alias: "t", description: "yaml (default) or json", valueHint: "yaml|json" },
  "max-nodes-per-entry": {
    type: "string",
    description: "Truncate node lists in topology readings to N names (0: no limit)",
    valueHint: "n",
  },
} as const;

/** Collects the node this process runs on and delivers it; every input is checked first. */
export async function runNodeSnapshot(
  ctx: RunContext,
  args: {
    output?: string | undefined;
    format?: string | undefined;
    "max-nodes-per-entry"?: string | undefined;
  },
  writeStdout: (text: string) => void,
): Promise<void> {
  const destination = parseDestination(args.output);
  const format = (args.format ?? "yaml") as SnapshotFormat;
  if (!SNAPSHOT_FORMATS.includes(format))
    throw badFlag("--format", args.format ?? "", "yaml or json", "pass -t yaml or -t json");
  const maxNodesPerEntry = parseCount(
    "--max-nodes-per-entry",
    args["max-nodes-per-entry"] ?? ctx.env.AICR_MAX_NODES_PER_ENTRY ?? "0",
  );
  checkDestination(destination);
  const client = await ctx.transport.connect();
  return collectNodeSnapshot({
    agentMode: ctx.transport.name === "in-cluster",
    client,
    destination,
    format,
    maxNodesPerEntry,
    runId: ctx.runId,
    version: ctx.version,
    env: ctx.env,
    log: ctx.log,
    signal: ctx.signal,
    writeStdout,
  });
}

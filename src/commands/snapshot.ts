import { hostname } from "node:os";
import { collectAll, hostRootFromEnv } from "../collect/index.ts";
import { AicrError } from "../core/errors.ts";
import { clusterReaderFor } from "../kube/cluster-reader.ts";
import { buildSnapshot, formatTimestamp, provenanceFromEnv, sourceNodeFromEnv } from "../snapshot/build.ts";
import { deliverSnapshot, describeDestination, parseDestination } from "../snapshot/deliver.ts";
import { SNAPSHOT_FORMATS, type SnapshotFormat, serializeSnapshot } from "../snapshot/serialize.ts";
import { defineAicrCommand } from "./_define.ts";

const AGENT_MODE_ENV = "AICR_AGENT_MODE";

function parseFormat(value: string | undefined): SnapshotFormat {
  const format = (value ?? "yaml") as SnapshotFormat;
  if (!SNAPSHOT_FORMATS.includes(format)) {
    throw new AicrError(
      "INVALID_REQUEST",
      `invalid --format ${JSON.stringify(value)}: expected one of ${SNAPSHOT_FORMATS.join(", ")}`,
      {
        remedy: "pass -t yaml or -t json",
        context: { field: "--format", value },
      },
    );
  }
  return format;
}

function parseMaxNodes(value: string | undefined): number {
  if (value === undefined || value === "") return 0;
  if (!/^[0-9]+$/.test(value)) {
    throw new AicrError(
      "INVALID_REQUEST",
      `invalid max nodes per entry ${JSON.stringify(value)}: expected a whole number ≥ 0`,
      {
        remedy: "pass --max-nodes-per-entry 0 (no limit) or a positive number",
        context: { field: "--max-nodes-per-entry", value },
      },
    );
  }
  return Number(value);
}

/** The controller marks its own staging ConfigMap; the Job's identity comes from the downward API. */
function stagingOwner(
  env: Readonly<Record<string, string | undefined>>,
): { name: string; uid: string } | undefined {
  if (env.AICR_OUTPUT_OWNED_BY_JOB !== "true" || !env.AICR_JOB_NAME || !env.AICR_JOB_UID) return undefined;
  return { name: env.AICR_JOB_NAME, uid: env.AICR_JOB_UID };
}

/**
 * aicr snapshot — collects a node and writes its snapshot. Runs as the agent inside the Job's pod
 * (AICR_AGENT_MODE=true) or on this host with --local.
 */
export default defineAicrCommand({
  name: "snapshot",
  description: "Capture a node's configuration (--local: this host; in the agent Job's pod: that node)",
  transport: (_args, env) => (env[AGENT_MODE_ENV] === "true" ? "in-cluster" : "local"),
  args: {
    local: {
      type: "boolean",
      description: "Collect this host (no agent Job); K8s readings only if a cluster answers",
    },
    output: {
      type: "string",
      alias: "o",
      description: "stdout (default), a file path, or cm://<namespace>/<name>",
      valueHint: "dest",
    },
    format: { type: "string", alias: "t", description: "yaml (default) or json", valueHint: "yaml|json" },
    "max-nodes-per-entry": {
      type: "string",
      description:
        "Truncate node lists in topology readings to N names (0: no limit; also $AICR_MAX_NODES_PER_ENTRY)",
      valueHint: "n",
    },
  },
  async run(ctx, args) {
    const agentMode = ctx.env[AGENT_MODE_ENV] === "true";
    if (!agentMode && !args.local) {
      throw new AicrError(
        "INVALID_REQUEST",
        "aicr snapshot needs --local in this build: deploying the agent Job from a jump host is not available yet",
        {
          remedy: "run `aicr snapshot --local` to snapshot this host",
        },
      );
    }
    // Every input is checked before anything is collected or written.
    const dest = parseDestination(args.output);
    const format = parseFormat(args.format);
    const maxNodesPerEntry = parseMaxNodes(args["max-nodes-per-entry"] ?? ctx.env.AICR_MAX_NODES_PER_ENTRY);

    const client = await ctx.transport.connect();
    if (dest.kind === "configmap" && !client) {
      throw new AicrError(
        "INVALID_REQUEST",
        `cannot write ${describeDestination(dest)}: no cluster is configured or reachable`,
        {
          remedy: "set KUBECONFIG or pass --kubeconfig, or write to a file or stdout instead",
        },
      );
    }
    const sourceNode = sourceNodeFromEnv(ctx.env, hostname());
    ctx.log.info("collecting", {
      node: sourceNode,
      mode: agentMode ? "agent" : "local",
      cluster: client ? client.server : "none",
    });
    const measurements = await collectAll({
      hostRoot: hostRootFromEnv(ctx.env),
      env: ctx.env,
      cluster: client ? clusterReaderFor(client) : undefined,
      nodeName: sourceNode,
      maxNodesPerEntry,
      log: ctx.log,
      signal: ctx.signal,
    });
    const now = new Date();
    const doc = buildSnapshot({
      measurements,
      version: ctx.version,
      sourceNode,
      now,
      provenance: agentMode ? provenanceFromEnv(ctx.env) : { runId: ctx.runId },
    });
    const content = serializeSnapshot(doc, format);
    await deliverSnapshot(dest, {
      content,
      format,
      timestamp: formatTimestamp(now),
      version: ctx.version,
      client,
      ownerJob: agentMode ? stagingOwner(ctx.env) : undefined,
      writeStdout: (text) => void process.stdout.write(text),
    });
    ctx.log.info("snapshot written", {
      destination: describeDestination(dest),
      measurements: doc.measurements.map((m) => m.type).join(","),
    });
  },
});

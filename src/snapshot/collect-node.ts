import { hostname } from "node:os";
import { collectAll, hostRootFromEnv } from "../collect/index.ts";
import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import { clusterReaderFor } from "../kube/cluster-reader.ts";
import { buildSnapshot, formatTimestamp, provenanceFromEnv, sourceNodeFromEnv } from "./_build.ts";
import { type Destination, deliverSnapshot, describeDestination } from "./deliver.ts";
import { assertGpuFound, type Presentation, renderSnapshot, withProviderReadings } from "./render.ts";
import type { Subtype } from "./schema.ts";
import type { SnapshotFormat } from "./serialize.ts";

type Env = Readonly<Record<string, string | undefined>>;

export interface CollectNodeOptions {
  /** In the agent's pod: provenance from the downward API, and the staging ConfigMap owned by the Job. */
  agentMode: boolean;
  client: KubeClient | undefined;
  destination: Destination;
  format: SnapshotFormat;
  maxNodesPerEntry: number;
  runId: string;
  version: string;
  env: Env;
  log: Logger;
  signal: AbortSignal;
  writeStdout: (text: string) => void;
  /** table or --template instead of `format` (never with a cm:// destination); default: `format`. */
  presentation?: Presentation | undefined;
  /** K8s subtypes projected from --oke-addons/--aks-gpu-pools/--gke-gpu-pools, merged before delivery. */
  providerReadings?: Subtype[] | undefined;
  /** Fail NOT_FOUND, delivering nothing, when no GPU subtype reports gpu-count > 0. */
  requireGpu?: boolean | undefined;
  /** Extra environment for the collectors (AICR_CLUSTER_CONFIG_PATH, AICR_DISCOVER_NETWORK, AICR_OS). */
  collectEnv?: Record<string, string> | undefined;
}

/** The remote side marks its own staging ConfigMap; the Job's identity comes from the downward API. */
function stagingOwner(env: Env): { name: string; uid: string } | undefined {
  if (env.AICR_OUTPUT_OWNED_BY_JOB !== "true" || !env.AICR_JOB_NAME || !env.AICR_JOB_UID) return undefined;
  return { name: env.AICR_JOB_NAME, uid: env.AICR_JOB_UID };
}

/** Collects the node this process runs on and delivers the snapshot (agent mode and --local). */
export async function collectNodeSnapshot(o: CollectNodeOptions): Promise<void> {
  if (o.destination.kind === "configmap" && !o.client) {
    throw new AicrError(
      "INVALID_REQUEST",
      `cannot write ${describeDestination(o.destination)}: no cluster is configured or reachable`,
      {
        remedy:
          "pass --kubeconfig <path> or --context <name> to name the cluster, or write to a file or stdout instead",
      },
    );
  }
  const sourceNode = sourceNodeFromEnv(o.env, hostname());
  o.log.info("collecting", {
    node: sourceNode,
    mode: o.agentMode ? "agent" : "local",
    cluster: o.client ? o.client.server : "none",
  });
  const measurements = await collectAll({
    hostRoot: hostRootFromEnv(o.env),
    env: { ...o.env, ...o.collectEnv },
    cluster: o.client ? clusterReaderFor(o.client) : undefined,
    nodeName: sourceNode,
    maxNodesPerEntry: o.maxNodesPerEntry,
    log: o.log,
    signal: o.signal,
  });
  const now = new Date();
  const built = buildSnapshot({
    measurements,
    version: o.version,
    sourceNode,
    now,
    provenance: o.agentMode ? provenanceFromEnv(o.env) : { runId: o.runId },
  });
  const doc = withProviderReadings(built, o.providerReadings);
  if (o.requireGpu) assertGpuFound(doc);
  await deliverSnapshot(o.destination, {
    content: renderSnapshot(doc, o.presentation ?? { kind: o.format }),
    format: o.format,
    timestamp: formatTimestamp(now),
    version: o.version,
    client: o.client,
    ownerJob: o.agentMode ? stagingOwner(o.env) : undefined,
    writeStdout: o.writeStdout,
    signal: o.signal,
  });
  o.log.info("snapshot written", {
    destination: describeDestination(o.destination),
    measurements: doc.measurements.map((m) => m.type).join(","),
  });
}

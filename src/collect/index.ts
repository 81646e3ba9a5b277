import { runWithTimeout } from "../core/async.ts";
import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { MeasurementType } from "../snapshot/schema.ts";
import { collectGpu } from "./_gpu.ts";
import { collectK8s } from "./_k8s.ts";
import type { ClusterReader } from "./_k8s-source.ts";
import { collectNetwork, networkRequested } from "./_network.ts";
import { collectOs } from "./_os.ts";
import { collectSystemd } from "./_systemd.ts";
import { collectTopology } from "./_topology.ts";
import { type CollectorOptions, type Env, errorText, type Measurement } from "./_types.ts";

export type { ClusterReader } from "./_k8s-source.ts";
export { type ClusterConfig, checkClusterConfigFile, MAX_CLUSTER_CONFIG_BYTES } from "./_network-config.ts";

/** Per-collector time limits (ms): 10 s for node collectors, 60 s for K8s and NetworkTopology, 90 s for topology paging. */
export const DEFAULT_TIMEOUTS: Readonly<Record<CollectedType, number>> = {
  K8s: 60_000,
  GPU: 10_000,
  OS: 10_000,
  SystemD: 10_000,
  NodeTopology: 90_000,
  NetworkTopology: 60_000,
};

type CollectedType = MeasurementType;

export interface CollectAllOptions {
  hostRoot: string;
  env: Env;
  /** Without a cluster, K8s and NodeTopology are not collected (local mode with no cluster). */
  cluster?: ClusterReader | undefined;
  /** The node this agent runs on (for the K8s `node` subtype). */
  nodeName: string;
  maxNodesPerEntry?: number | undefined;
  log: Logger;
  signal?: AbortSignal | undefined;
  timeouts?: Partial<Record<CollectedType, number>> | undefined;
}

/** `AICR_HOST_ROOT`, default `/`. */
export function hostRootFromEnv(env: Env): string {
  return env.AICR_HOST_ROOT || "/";
}

/** Undefined: nothing to report (NetworkTopology on a host without NICs), not a failure. */
type Run = (options: CollectorOptions) => Promise<Measurement | undefined>;

function plan(options: CollectAllOptions): [CollectedType, Run][] {
  const steps: [CollectedType, Run][] = [];
  const { cluster } = options;
  if (cluster) steps.push(["K8s", (o) => collectK8s({ ...o, cluster, nodeName: options.nodeName })]);
  steps.push(
    ["GPU", collectGpu],
    ["OS", collectOs],
    // AICR_OS=talos reads SystemD from this node's Node object (no systemd access there).
    ["SystemD", (o) => collectSystemd({ ...o, cluster, nodeName: options.nodeName })],
  );
  if (cluster) {
    const maxNodesPerEntry = options.maxNodesPerEntry ?? 0;
    steps.push(["NodeTopology", (o) => collectTopology({ ...o, cluster, maxNodesPerEntry })]);
  }
  const network = networkRequested(options.env);
  if (network.discover || network.clusterConfigPath) {
    const nodeName = options.nodeName;
    steps.push(["NetworkTopology", (o) => collectNetwork({ ...o, ...network, cluster, nodeName })]);
  }
  return steps;
}

/**
 * Runs every applicable collector concurrently, each under its own timeout. A collector that fails
 * or times out is logged with its name and cause and left out — never fatal. Measurements come back
 * in a stable type order: K8s, GPU, OS, SystemD, NodeTopology, NetworkTopology. Only cancelling `signal` is an error.
 */
export async function collectAll(options: CollectAllOptions): Promise<Measurement[]> {
  const parent = options.signal ?? new AbortController().signal;
  const base = { hostRoot: options.hostRoot, env: options.env, log: options.log };
  const settled = await Promise.allSettled(
    plan(options).map(async ([type, run]) => {
      const ms = options.timeouts?.[type] ?? DEFAULT_TIMEOUTS[type];
      try {
        // The timeout ends a collector that ignores its signal; the abort tells a well-behaved one to stop.
        return await runWithTimeout((signal) => run({ ...base, signal }), {
          ms,
          onTimeout: () => new Error(`timed out after ${ms} ms`),
          signal: parent,
        });
      } catch (err) {
        if (!parent.aborted) {
          options.log.warn("collector failed; left out of the snapshot", {
            collector: type,
            cause: errorText(err),
          });
        }
        throw err;
      }
    }),
  );
  if (parent.aborted) {
    throw new AicrError("CANCELED", "Collection was cancelled before every collector finished", {
      cause: parent.reason,
      remedy: "Run the command again and let it finish.",
    });
  }
  return settled.flatMap((r) => (r.status === "fulfilled" && r.value ? [r.value] : []));
}

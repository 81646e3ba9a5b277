import { runWithTimeout } from "../core/async.ts";
import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { MeasurementType } from "../snapshot/schema.ts";
import { collectGpu } from "./_gpu.ts";
import { collectK8s } from "./_k8s.ts";
import type { ClusterReader } from "./_k8s-source.ts";
import { collectOs } from "./_os.ts";
import { collectSystemd } from "./_systemd.ts";
import { collectTopology } from "./_topology.ts";
import { type CollectorOptions, type Env, errorText, type Measurement } from "./_types.ts";

export type { ClusterReader } from "./_k8s-source.ts";

/** Per-collector time limits (ms): 10 s for node collectors, 60 s for K8s, 90 s for topology paging. */
export const DEFAULT_TIMEOUTS: Readonly<Record<CollectedType, number>> = {
  K8s: 60_000,
  GPU: 10_000,
  OS: 10_000,
  SystemD: 10_000,
  NodeTopology: 90_000,
};

type CollectedType = Exclude<MeasurementType, "NetworkTopology">;

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

type Run = (options: CollectorOptions) => Promise<Measurement>;

function plan(options: CollectAllOptions): [CollectedType, Run][] {
  const steps: [CollectedType, Run][] = [];
  const { cluster } = options;
  if (cluster) steps.push(["K8s", (o) => collectK8s({ ...o, cluster, nodeName: options.nodeName })]);
  steps.push(["GPU", collectGpu], ["OS", collectOs], ["SystemD", collectSystemd]);
  if (cluster) {
    const maxNodesPerEntry = options.maxNodesPerEntry ?? 0;
    steps.push(["NodeTopology", (o) => collectTopology({ ...o, cluster, maxNodesPerEntry })]);
  }
  return steps;
}

/**
 * Runs every applicable collector concurrently, each under its own timeout. A collector that fails
 * or times out is logged with its name and cause and left out — never fatal. Measurements come back
 * in a stable type order: K8s, GPU, OS, SystemD, NodeTopology. Only cancelling `signal` is an error.
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
  return settled.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
}

/**
 * The start options of a real test cluster for the stand-ins, the one the conformance suites build on:
 * its nodes, and one process runtime for every pod — the images given run as their executables (the
 * checks' image as dist/aicr), every other image (an operator's, an exporter's, a scheduler's) runs
 * until its pod is deleted, the DRA driver's as draOperandRuntime runs them (its init containers end, a
 * `:hang` one never does), UNPULLABLE_IMAGE never starts, and the GPU-leak switch (gpu-access.ts), when
 * given, sits in front of it all.
 *
 *   useCluster("real", standinClusterOptions());                                  // reads only
 *   startTestCluster("real", standinClusterOptions({ nodes, images: { [IMAGE]: AICR }, leak }));
 */
import { processRuntime } from "../controllers/process-runtime.ts";
import { draOperandRuntime } from "../dra.ts";
import { node } from "../nodes.ts";
import type { KObject } from "../objects.ts";
import type { TestClusterOptions } from "../testbed.ts";
import { runUntilStopped } from "./_host.ts";
import { UNPULLABLE_IMAGE } from "./_standin-api.ts";
import { type GpuLeak, leakingRuntime } from "./gpu-access.ts";

export interface StandinClusterOptions {
  /** Default: gpu-node-1 (8 GPUs) and cpu-node-1. */
  nodes?: KObject[];
  /** Image → executable. */
  images?: Record<string, string>;
  /** A directory put first on the pods' PATH (a fixture's nvidia-smi). */
  binDir?: string;
  /** While enabled, every claim-less container gets the node's GPU device nodes. */
  leak?: GpuLeak;
}

/** Start options of a real cluster whose stand-in workloads run until deleted (the header's runtime). */
export function standinClusterOptions(o: StandinClusterOptions = {}): TestClusterOptions {
  const path = process.env.PATH ?? "/usr/bin:/bin";
  return {
    nodes: o.nodes ?? [node("gpu-node-1", { gpus: 8 }), node("cpu-node-1")],
    unpullableImages: [UNPULLABLE_IMAGE],
    runtime: () => {
      const runtime = processRuntime({
        images: o.images ?? {},
        baseEnv: { PATH: o.binDir ? `${o.binDir}:${path}` : path, NO_COLOR: "1" },
        fallback: draOperandRuntime(runUntilStopped),
      });
      return o.leak ? leakingRuntime(runtime, o.leak) : runtime;
    },
  };
}

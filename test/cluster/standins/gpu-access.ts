/**
 * The DRA checks' test cluster (real control plane): the DRA driver stand-in's runtime (../dra.ts) with
 * the checks' own image run as dist/aicr, and a switch that breaks GPU isolation on every node — while
 * `leak.enabled`, a container of a pod that holds no ResourceClaim gets the node's GPU device nodes
 * anyway, as on a node whose default container runtime injects every GPU into every container
 * (NVIDIA_VISIBLE_DEVICES=all without the device plugin's or DRA's say). What secure-accelerator-access
 * is meant to catch.
 *
 *   const leak = { enabled: false };
 *   const cluster = useCluster("real", { start: () => draCheckCluster({ leak }) });
 *   leak.enabled = true;   // the next claim-less pod sees /dev/nvidia0, /dev/nvidiactl
 */
import { asRuntime, type ContainerRuntime } from "../controllers/runtime.ts";
import { draClusterOptions } from "../dra.ts";
import { node } from "../nodes.ts";
import type { KObject } from "../objects.ts";
import { startTestCluster, type TestCluster } from "../testbed.ts";
import { runUntilStopped } from "./_host.ts";

/** What a leaking node gives every claim-less container. */
export const LEAKED_DEVICES = ["/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"];

export interface GpuLeak {
  enabled: boolean;
}

/** The runtime with the leak switch in front of it (pure wrapper). */
export function leakingRuntime(inner: ContainerRuntime, leak: GpuLeak): ContainerRuntime {
  return {
    ...inner,
    run: (ctx) => {
      const claimless = (ctx.pod.spec?.resourceClaims ?? []).length === 0;
      return inner.run(leak.enabled && claimless && !ctx.devices ? { ...ctx, devices: LEAKED_DEVICES } : ctx);
    },
  };
}

export interface DraCheckClusterOptions {
  /** Image → executable: the check's image as dist/aicr. */
  images: Record<string, string>;
  leak: GpuLeak;
  /** Default: gpu-node-1 with 2 GPUs, gpu-node-2 with 2, and cpu-node-1. */
  nodes?: KObject[];
}

/**
 * A real cluster for the DRA checks: nodes, the driver's runtime (its pods run until deleted, every other
 * image without an executable too), the leak switch. The DRA driver itself is installed by the test
 * (installDraDriver), in the state it needs.
 */
export function draCheckCluster(o: DraCheckClusterOptions): Promise<TestCluster> {
  const base = draClusterOptions({
    nodes: o.nodes ?? [node("gpu-node-1", { gpus: 2 }), node("gpu-node-2", { gpus: 2 }), node("cpu-node-1")],
    images: o.images,
    fallback: runUntilStopped,
    runtime: { baseEnv: { PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1" } },
  });
  return startTestCluster("real", {
    ...base,
    runtime: (api) => leakingRuntime(asRuntime(base.runtime?.(api)), o.leak),
  });
}

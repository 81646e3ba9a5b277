/**
 * A switch that breaks GPU isolation on every node of a real test cluster (_cluster.ts puts it in front
 * of the process runtime) — while `leak.enabled`, a container of a pod that holds no ResourceClaim gets
 * the node's GPU device nodes anyway, as on a node whose default container runtime injects every GPU
 * into every container (NVIDIA_VISIBLE_DEVICES=all without the device plugin's or DRA's say). What
 * secure-accelerator-access is meant to catch.
 *
 *   const leak = { enabled: false };
 *   const cluster = useCluster("real", standinClusterOptions({ leak }));
 *   leak.enabled = true;   // the next claim-less pod sees /dev/nvidia0, /dev/nvidiactl
 */
import type { ContainerRuntime } from "../controllers/runtime.ts";

/** What a leaking node gives every claim-less container. */
export const LEAKED_DEVICES = ["/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"];

/** The switch: read at each container's start. */
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

import { withTimeout } from "../core/async.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import type { Snapshot } from "../snapshot/schema.ts";

export const GPU_NODE_LABEL = "nvidia.com/gpu.present";
const LOOKUP_MS = 5000;

/** The look-up alone, so it can go out alongside the permission gate; its outcome is read later. */
export function startGpuNodeLookup(client: KubeClient): Promise<{ items: unknown[] }> {
  const lookup = client.list("v1", "Node", { labelSelector: `${GPU_NODE_LABEL}=true`, limit: 1 });
  lookup.catch(() => {});
  return lookup;
}

/** A selector for GPU nodes when the cluster has any; fail-open: a slow or refused look-up only warns. */
export async function gpuNodeSelector(
  client: KubeClient,
  log: Logger,
  started?: Promise<{ items: unknown[] }>,
): Promise<Record<string, string> | undefined> {
  const lookup = started ?? startGpuNodeLookup(client);
  const unanswered = new Error(`GPU node look-up did not answer within ${LOOKUP_MS / 1000}s`);
  try {
    const found = await withTimeout(lookup, LOOKUP_MS, () => unanswered);
    if (found.items.length === 0) return undefined;
    log.info(
      `auto-targeting GPU nodes: node selector ${GPU_NODE_LABEL}=true (set --node-selector, --require-gpu or --runtime-class to choose yourself)`,
    );
    return { [GPU_NODE_LABEL]: "true" };
  } catch (err) {
    if (err === unanswered) {
      log.warn(`${unanswered.message}; running without a node selector`);
      return undefined;
    }
    log.warn("GPU node look-up failed; running without a node selector", { cause: (err as Error).message });
    return undefined;
  }
}

/** No GPU data in the snapshot although the cluster's nodes say they have GPUs: the pod landed elsewhere. */
export function placementMismatch(doc: Snapshot): boolean {
  const gpuCounts = doc.measurements
    .filter((m) => m.type === "GPU")
    .flatMap((m) => m.subtypes.map((s) => Number(s.data["gpu-count"] ?? 0)));
  if (gpuCounts.some((n) => n > 0)) return false;
  const labels =
    doc.measurements.find((m) => m.type === "NodeTopology")?.subtypes.find((s) => s.subtype === "label")
      ?.data ?? {};
  return Object.keys(labels).some((k) => k.startsWith("nvidia.com/gpu"));
}

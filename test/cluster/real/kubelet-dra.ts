/**
 * The process kubelet's dynamic resource allocation step, as the real kubelet's DRA manager
 * (pkg/kubelet/cm/dra) takes it before any container of a pod starts: each of the pod's
 * `spec.resourceClaims` resolved to its ResourceClaim (named, or generated from a template and named in
 * `status.resourceClaimStatuses`), read as the node (the Node authorizer allows the claims of its pods),
 * refused unless it is allocated and reserved for this pod, then its devices handed to the containers
 * that name the claim in `resources.claims` (and, with `request`, only that request's devices).
 *
 * Simplification (the stand-in for a DRA driver's kubelet plugin, test/cluster/dra.ts): no
 * NodePrepareResources gRPC and no CDI spec. The devices of driver `gpu.nvidia.com` named `gpu-<i>`
 * become the device nodes `/dev/nvidia<i>`, plus `/dev/nvidiactl`, `/dev/nvidia-uvm` and
 * `/dev/nvidia-uvm-tools` (the edits NVIDIA's driver gives every GPU); the process runtime creates
 * them as clones of /dev/null in the container's own /dev (controllers/process-runtime.ts). Devices of
 * other drivers, or of other names, give no device node.
 */
import { ContainerConfigError } from "../controllers/env.ts";
import type { KObject } from "../store.ts";
import type { NodeApi } from "./kubelet-api.ts";

/** The driver whose allocated devices become /dev/nvidia* device nodes. */
export const NVIDIA_GPU_DRIVER = "gpu.nvidia.com";
/** What every container holding at least one NVIDIA GPU also gets. */
export const NVIDIA_CONTROL_DEVICES = ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"];

/** A claim the pod may not use yet (not allocated, not reserved for it, not created): the pod waits. */
export class ClaimNotReadyError extends ContainerConfigError {}

interface DeviceResult {
  request: string;
  driver: string;
  pool: string;
  device: string;
}

/** The device node of one allocated device, or undefined when it has none. */
export function deviceNode(result: { driver: string; device: string }): string | undefined {
  if (result.driver !== NVIDIA_GPU_DRIVER) return undefined;
  const m = /^gpu-(\d+)$/.exec(result.device);
  return m ? `/dev/nvidia${m[1]}` : undefined;
}

/**
 * The device nodes of each container (by name, init containers included) of a pod; a container absent
 * from the map gets none. Throws ClaimNotReadyError while a claim is missing, unallocated or not
 * reserved for the pod (the kubelet retries, the pod stays ContainerCreating), an ApiError for a failed
 * read.
 */
export async function prepareResourceClaims(api: NodeApi, pod: KObject): Promise<Map<string, string[]>> {
  const refs: { name: string; resourceClaimName?: string; resourceClaimTemplateName?: string }[] =
    pod.spec?.resourceClaims ?? [];
  const devices = new Map<string, string[]>();
  if (refs.length === 0) return devices;
  const { namespace, name, uid } = pod.metadata;
  /** The allocated results of each of the pod's claim entries, by entry name. */
  const results = new Map<string, DeviceResult[]>();
  for (const ref of refs) {
    let claimName = ref.resourceClaimName;
    if (!claimName && ref.resourceClaimTemplateName) {
      const status = (pod.status?.resourceClaimStatuses ?? []).find(
        (s: { name: string }) => s.name === ref.name,
      );
      if (!status) throw new ClaimNotReadyError(`pod "${namespace}/${name}": ResourceClaim not created yet`);
      claimName = status.resourceClaimName;
      if (!claimName) continue; // intentionally not created: nothing to prepare
    }
    if (!claimName) continue;
    let claim: KObject;
    try {
      claim = await api.json(
        "GET",
        `/apis/resource.k8s.io/v1/namespaces/${namespace}/resourceclaims/${encodeURIComponent(claimName)}`,
      );
    } catch (err) {
      throw new ClaimNotReadyError(`fetch ResourceClaim ${claimName}: ${(err as Error).message}`);
    }
    const reserved = (claim.status?.reservedFor ?? []).some(
      (r: { resource?: string; uid?: string }) => r.resource === "pods" && r.uid === uid,
    );
    if (!reserved || !claim.status?.allocation)
      throw new ClaimNotReadyError(
        `pod ${name} (${uid}) is not allowed to use ResourceClaim ${claimName} (${claim.metadata.uid})`,
      );
    results.set(ref.name, claim.status.allocation.devices?.results ?? []);
  }
  const containers: KObject["spec"][] = [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])];
  for (const c of containers) {
    const nodes = new Set<string>();
    for (const use of (c.resources?.claims ?? []) as { name: string; request?: string }[]) {
      for (const r of results.get(use.name) ?? []) {
        if (use.request && r.request !== use.request && !r.request.startsWith(`${use.request}/`)) continue;
        const node = deviceNode(r);
        if (node) nodes.add(node);
      }
    }
    if (nodes.size === 0) continue;
    const gpus = [...nodes].sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
    devices.set(c.name, [...gpus, ...NVIDIA_CONTROL_DEVICES]);
  }
  return devices;
}

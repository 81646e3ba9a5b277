import type { Json, V1Node, V1Pod } from "../kube/types.ts";
import type { Readings } from "./_types.ts";

/**
 * `registry.example.com:5000/team/gpu-operator:v25.10.1@sha256:…` → ["gpu-operator", "v25.10.1"]:
 * everything up to the last '/' is registry and path, a digest is dropped, the tag follows the last ':'.
 */
export function parseImage(image: string): [name: string, tag: string] {
  const base = image.slice(image.lastIndexOf("/") + 1);
  const at = base.indexOf("@");
  const ref = at < 0 ? base : base.slice(0, at);
  const colon = ref.lastIndexOf(":");
  return colon < 0 ? [ref, "latest"] : [ref.slice(0, colon), ref.slice(colon + 1)];
}

/** Adds every container, init and ephemeral container image of the pods; a later pod's tag wins. */
export function addPodImages(pods: readonly Json<V1Pod>[], into: Readings): void {
  for (const pod of pods) {
    const spec = pod.spec;
    const containers = [
      ...(spec?.containers ?? []),
      ...(spec?.initContainers ?? []),
      ...(spec?.ephemeralContainers ?? []),
    ];
    for (const container of containers) {
      if (!container.image) continue;
      const [name, tag] = parseImage(container.image);
      if (name) into[name] = tag;
    }
  }
}

/**
 * A ClusterPolicy spec as dotted keys: nested maps recurse, non-empty arrays become their JSON,
 * scalars become strings. Empty arrays, empty maps and nulls carry no setting and are left out.
 */
export function flattenSpec(spec: Readonly<Record<string, unknown>>, prefix: string, into: Readings): void {
  for (const [key, value] of Object.entries(spec)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value === null || value === undefined) continue;
    if (Array.isArray(value)) {
      if (value.length > 0) into[path] = JSON.stringify(value);
    } else if (typeof value === "object") {
      flattenSpec(value as Record<string, unknown>, path, into);
    } else {
      into[path] = String(value);
    }
  }
}

const PROVIDERS: Readonly<Record<string, string>> = { aws: "eks", gce: "gke", azure: "aks", oci: "oke" };

/** Managed-Kubernetes name from a providerID scheme (`aws:///…` → eks); OKE may write a bare OCID. */
export function providerOf(providerId: string): string {
  if (providerId.startsWith("ocid1.")) return "oke";
  const scheme = providerId.split("://")[0]?.trim().toLowerCase() ?? "";
  return PROVIDERS[scheme] ?? scheme;
}

/** The `node` subtype for the node this agent runs on. */
export function nodeReadings(nodeName: string, node: Json<V1Node>): Readings {
  const out: Readings = { "source-node": nodeName };
  const providerId = node.spec?.providerID;
  if (providerId) {
    out.provider = providerOf(providerId);
    out["provider-id"] = providerId;
  }
  const info = node.status?.nodeInfo;
  const runtime = info?.containerRuntimeVersion;
  if (runtime) {
    out["container-runtime-id"] = runtime;
    const sep = runtime.indexOf("://");
    if (sep >= 0) {
      out["container-runtime-name"] = runtime.slice(0, sep);
      out["container-runtime-version"] = runtime.slice(sep + 3);
    }
  }
  if (info?.kubeletVersion) out["kubelet-version"] = info.kubeletVersion;
  if (info?.kernelVersion) out["kernel-version"] = info.kernelVersion;
  if (info?.operatingSystem) out["operating-system"] = info.operatingSystem;
  if (info?.osImage) out["os-image"] = info.osImage;
  return out;
}

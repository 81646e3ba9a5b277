/** Field selectors each resource supports, as registered by kube-apiserver's field label conversions. */
import type { ResourceType } from "./resources.ts";

const META = ["metadata.name", "metadata.namespace"];

const BY_RESOURCE: Record<string, string[]> = {
  pods: [
    ...META,
    "status.phase",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "status.podIP",
    "status.nominatedNodeName",
  ],
  events: [
    ...META,
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
  ],
  nodes: [...META, "spec.unschedulable"],
  namespaces: [...META, "status.phase"],
  jobs: [...META, "status.successful"],
};

/**
 * The refusal of a field the resource does not support, in the words of its field label conversion
 * function: custom ones (pods, nodes, namespaces, events; custom resources) "field label not supported",
 * Jobs' their own, and runtime.DefaultMetaV1FieldSelectorConversion for every other built-in.
 */
export function unsupportedFieldMessage(r: ResourceType): (field: string) => string {
  if (r.group === "batch" && r.plural === "jobs")
    return (f) => `field label "${f}" not supported for ${r.kind}`;
  if (r.plural in BY_RESOURCE || r.group === "nvidia.com") return (f) => `field label not supported: ${f}`;
  return (f) => `"${f}" is not a known field selector: only "metadata.name", "metadata.namespace"`;
}

export function supportedFields(r: ResourceType): string[] {
  return BY_RESOURCE[r.plural] ?? META;
}

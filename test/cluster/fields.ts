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

export function supportedFields(r: ResourceType): string[] {
  return BY_RESOURCE[r.plural] ?? META;
}

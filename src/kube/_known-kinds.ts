/**
 * The REST mapping of every built-in kind aicr reads or writes. Otherwise the client would ask the
 * apiserver's discovery for it before the first request of each group version: a round trip on the
 * critical path, for facts that are fixed by the Kubernetes API itself.
 */
type Entry = [kind: string, plural: string, namespaced: boolean];

const TABLE: Record<string, Entry[]> = {
  v1: [
    ["Namespace", "namespaces", false],
    ["Node", "nodes", false],
    ["Pod", "pods", true],
    ["ConfigMap", "configmaps", true],
    ["ServiceAccount", "serviceaccounts", true],
    ["Event", "events", true],
  ],
  "batch/v1": [["Job", "jobs", true]],
  "rbac.authorization.k8s.io/v1": [
    ["Role", "roles", true],
    ["RoleBinding", "rolebindings", true],
    ["ClusterRole", "clusterroles", false],
    ["ClusterRoleBinding", "clusterrolebindings", false],
  ],
  "node.k8s.io/v1": [["RuntimeClass", "runtimeclasses", false]],
};

/** The REST mapping of a built-in kind aicr uses; undefined → ask the apiserver's discovery. */
export function knownResource(
  apiVersion: string,
  kind: string,
): { plural: string; namespaced: boolean } | undefined {
  const entry = TABLE[apiVersion]?.find(([k]) => k === kind);
  return entry ? { plural: entry[1], namespaced: entry[2] } : undefined;
}

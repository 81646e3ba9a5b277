/**
 * The REST mapping of every built-in kind aicr reads or writes. client-node otherwise asks the
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

/** In client-node's APIResourceList shape, keyed by apiVersion. A kind not listed falls back to discovery. */
export function knownResourceLists(): Record<
  string,
  { groupVersion: string; resources: Record<string, unknown>[] }
> {
  return Object.fromEntries(
    Object.entries(TABLE).map(([groupVersion, entries]) => [
      groupVersion,
      {
        groupVersion,
        resources: entries.map(([kind, name, namespaced]) => ({
          kind,
          name,
          namespaced,
          singularName: kind.toLowerCase(),
          verbs: [],
        })),
      },
    ]),
  );
}

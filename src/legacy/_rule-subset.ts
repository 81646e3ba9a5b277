import {
  CLUSTER_BASELINE_RULES,
  DISCOVER_NETWORK_RULES,
  NAMESPACED_RULES,
  type PolicyRule,
} from "../rbac/rules.ts";

/**
 * What the original's --discover-network added to its ClusterRole (k8s-launch-kit's live discovery:
 * CRDs, a namespace, a DaemonSet and its objects, pods/exec, node labels, NicClusterPolicy patches).
 * aicr no longer grants these (rbac/rules.ts grants two reads instead); they stay here, unchanged,
 * so a ClusterRole an older version left behind is still recognised as aicr's.
 */
export const ORIGINAL_DISCOVER_NETWORK_RULES: readonly PolicyRule[] = [
  {
    apiGroups: ["apiextensions.k8s.io"],
    resources: ["customresourcedefinitions"],
    verbs: ["get", "list", "create", "update", "patch"],
  },
  { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "create", "delete"] },
  { apiGroups: ["apps"], resources: ["daemonsets"], verbs: ["get", "list", "watch", "create", "delete"] },
  { apiGroups: [""], resources: ["serviceaccounts", "configmaps"], verbs: ["get", "create", "delete"] },
  {
    apiGroups: ["rbac.authorization.k8s.io"],
    resources: ["roles", "rolebindings"],
    verbs: ["get", "create", "delete"],
  },
  { apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] },
  { apiGroups: [""], resources: ["nodes"], verbs: ["patch"] },
  { apiGroups: ["configuration.net.nvidia.com"], resources: ["nicdevices"], verbs: ["get", "list"] },
  { apiGroups: ["mellanox.com"], resources: ["nicclusterpolicies"], verbs: ["get", "patch"] },
];

/**
 * Everything an aicr agent's ClusterRole was ever granted: the baseline (the 3- and 6-rule versions
 * are subsets), the original's discovery set and today's read-only discovery set.
 */
export const LEGACY_CLUSTER_GRANTS: readonly PolicyRule[] = [
  ...CLUSTER_BASELINE_RULES,
  ...ORIGINAL_DISCOVER_NETWORK_RULES,
  ...DISCOVER_NETWORK_RULES,
];
/** Everything the legacy agent's Role was granted. */
export const LEGACY_ROLE_GRANTS: readonly PolicyRule[] = NAMESPACED_RULES;

const groupText = (group: string): string => (group === "" ? "core" : group);

/**
 * The permissions in `rules` that `allowed` does not grant, one `verb resource (group)` text each.
 * Compared per (group, resource, verb), so a rule split or merged differently still matches; a
 * wildcard matches only a wildcard, which no aicr version granted.
 */
export function grantsBeyond(rules: readonly PolicyRule[], allowed: readonly PolicyRule[]): string[] {
  const extra: string[] = [];
  for (const rule of rules) {
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        for (const verb of rule.verbs ?? []) {
          const granted = allowed.some(
            (a) => a.apiGroups.includes(group) && a.resources.includes(resource) && a.verbs.includes(verb),
          );
          const text = `${verb} ${resource} (${groupText(group)})`;
          if (!granted && !extra.includes(text)) extra.push(text);
        }
      }
    }
  }
  return extra;
}

/** A short list for a reason line: the first few, then how many more. */
export function shortList(items: readonly string[], max = 3): string {
  const shown = items.slice(0, max).join(", ");
  return items.length > max ? `${shown} and ${items.length - max} more` : shown;
}

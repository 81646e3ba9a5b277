import {
  CLUSTER_BASELINE_RULES,
  DISCOVER_NETWORK_RULES,
  NAMESPACED_RULES,
  type PolicyRule,
} from "../rbac/rules.ts";

/** Everything the legacy agent's ClusterRole was ever granted; the 3- and 6-rule versions are subsets. */
export const LEGACY_CLUSTER_GRANTS: readonly PolicyRule[] = [
  ...CLUSTER_BASELINE_RULES,
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
export function summarize(items: readonly string[], max = 3): string {
  const shown = items.slice(0, max).join(", ");
  return items.length > max ? `${shown} and ${items.length - max} more` : shown;
}

import { expandRules, type Grant } from "../kube/gate.ts";
import { type AccessCheck, checkKey } from "../kube/reviews.ts";
import { clusterRules, NAMESPACED_RULES } from "../rbac/rules.ts";

/** Caller checks every run needs (phase 1), whatever the ServiceAccount mode. */
export function callerBaseChecks(o: {
  namespace: string;
  outputNamespace: string;
  ownsOutput: boolean;
}): AccessCheck[] {
  const ns = o.namespace;
  const checks: AccessCheck[] = [
    { verb: "get", group: "", resource: "serviceaccounts", namespace: ns },
    ...["create", "get", "list", "watch", "delete"].map((verb) => ({
      verb,
      group: "batch",
      resource: "jobs",
      namespace: ns,
    })),
    ...["get", "list", "watch"].map((verb) => ({ verb, group: "", resource: "pods", namespace: ns })),
    { verb: "get", group: "", resource: "pods", subresource: "log", namespace: ns },
    ...["get", "list"].map((verb) => ({ verb, group: "", resource: "configmaps", namespace: ns })),
    { verb: "get", group: "", resource: "configmaps", namespace: o.outputNamespace },
  ];
  if (o.ownsOutput) checks.push({ verb: "delete", group: "", resource: "configmaps", namespace: ns });
  return dedupe(checks);
}

/** Prefix mode creates and (always, even on failure) deletes the run's five RBAC objects. */
export function callerRbacChecks(namespace: string): AccessCheck[] {
  const kinds: [string, string, string | undefined][] = [
    ["", "serviceaccounts", namespace],
    ["rbac.authorization.k8s.io", "roles", namespace],
    ["rbac.authorization.k8s.io", "rolebindings", namespace],
    ["rbac.authorization.k8s.io", "clusterroles", undefined],
    ["rbac.authorization.k8s.io", "clusterrolebindings", undefined],
  ];
  return kinds.flatMap(([group, resource, ns]) =>
    ["create", "delete"].map((verb) => ({ verb, group, resource, namespace: ns })),
  );
}

/**
 * The run's Role (namespace) and ClusterRole (cluster), as the gate's grants: escalation prevention
 * refuses them unless the caller holds what they grant. With --discover-network the ClusterRole adds
 * only reads (get, list nicdevices and nicclusterpolicies), so a caller who may read those may grant
 * them: the gate asks for nothing mutating on the discovery's behalf.
 */
export function agentGrants(o: { namespace: string; discoverNetwork: boolean }, hint?: string): Grant[] {
  return [
    { kind: "Role", namespace: o.namespace, rules: NAMESPACED_RULES, grantedBy: "the run's Role", hint },
    {
      kind: "ClusterRole",
      rules: clusterRules({ discoverNetwork: o.discoverNetwork }),
      grantedBy: "the run's ClusterRole",
      hint,
    },
  ];
}

/** What the agent does, as checks: an existing ServiceAccount must already hold every one. */
export function agentRuleChecks(o: { namespace: string; discoverNetwork: boolean }): AccessCheck[] {
  return agentGrants(o).flatMap((g) => expandRules(g.rules, g.namespace));
}

/** Exact duplicates removed, order kept (the same check in another scope is a different check). */
export function dedupe(checks: readonly AccessCheck[]): AccessCheck[] {
  const seen = new Set<string>();
  return checks.filter((c) => {
    const k = checkKey(c);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

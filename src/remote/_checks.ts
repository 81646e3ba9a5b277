import { type AccessCheck, checkKey } from "../kube/reviews.ts";
import { clusterRules, NAMESPACED_RULES, type PolicyRule } from "../rbac/rules.ts";

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

/** Every (verb, group, resource[/sub]) a rule grants, `pods/exec` split into resource and subresource. */
export function expandRules(rules: readonly PolicyRule[], namespace: string | undefined): AccessCheck[] {
  return dedupe(
    rules.flatMap((r) =>
      r.apiGroups.flatMap((group) =>
        r.resources.flatMap((res) => {
          const [resource = res, subresource] = res.split("/");
          return r.verbs.map((verb) => ({ verb, group, resource, subresource, namespace }));
        }),
      ),
    ),
  );
}

/**
 * What the run's Role (namespace) and ClusterRole (cluster) grant, as checks. With --discover-network
 * the ClusterRole adds only reads (get, list nicdevices and nicclusterpolicies), so a caller who may
 * read those may grant them: the gate asks for nothing mutating on the discovery's behalf.
 */
export function agentRuleChecks(o: { namespace: string; discoverNetwork: boolean }): {
  role: AccessCheck[];
  clusterRole: AccessCheck[];
} {
  return {
    role: expandRules(NAMESPACED_RULES, o.namespace),
    clusterRole: expandRules(clusterRules({ discoverNetwork: o.discoverNetwork }), undefined),
  };
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

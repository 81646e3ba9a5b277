import { clusterRules, NAMESPACED_RULES, type PolicyRule } from "../rbac/rules.ts";

/** One question for the authorizer: may <subject> <verb> <group>/<resource>[/<sub>] in <namespace | cluster>? */
export interface Check {
  verb: string;
  group: string;
  resource: string;
  subresource?: string | undefined;
  /** Absent: cluster-scoped. */
  namespace?: string | undefined;
}

/** Caller checks every run needs (phase 1), whatever the ServiceAccount mode. */
export function callerBaseChecks(o: {
  namespace: string;
  outputNamespace: string;
  ownsOutput: boolean;
}): Check[] {
  const ns = o.namespace;
  const checks: Check[] = [
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
export function callerRbacChecks(namespace: string): Check[] {
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
export function expandRules(rules: readonly PolicyRule[], namespace: string | undefined): Check[] {
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

/** What the run's Role (namespace) and ClusterRole (cluster) grant, as checks. */
export function agentRuleChecks(o: { namespace: string; discoverNetwork: boolean }): {
  role: Check[];
  clusterRole: Check[];
} {
  return {
    role: expandRules(NAMESPACED_RULES, o.namespace),
    clusterRole: expandRules(clusterRules({ discoverNetwork: o.discoverNetwork }), undefined),
  };
}

const keyOf = (c: Check): string =>
  `${c.verb}|${c.group}|${c.resource}|${c.subresource ?? ""}|${c.namespace ?? ""}`;

/** Exact duplicates removed, order kept (the same check in another scope is a different check). */
export function dedupe(checks: readonly Check[]): Check[] {
  const seen = new Set<string>();
  return checks.filter((c) => {
    const k = keyOf(c);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

export function describeCheck(c: Check): string {
  const res = `${c.resource}${c.subresource ? `/${c.subresource}` : ""}${c.group ? `.${c.group}` : ""}`;
  return `"${c.verb}" ${res} (${c.namespace ? `namespace "${c.namespace}"` : "cluster-scoped"})`;
}

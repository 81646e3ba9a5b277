import { bulletList } from "../../core/errors.ts";
import type { KubeClient } from "../../kube/client.ts";
import { type Grant, passGate, RBAC_GROUP as RBAC } from "../../kube/gate.ts";
import type { AccessCheck, ReviewOptions } from "../../kube/reviews.ts";
import { type CheckRule, isolatedEntries, type PlannedCheck, VALIDATOR_CLUSTER_RULES } from "../_catalog.ts";
import type { Recipe } from "../recipe.ts";
import { checkJobName } from "./_objects.ts";

/** What the caller itself does to run the validators: create, read back, watch, and delete the run's objects. */
export function callerChecks(namespace: string): AccessCheck[] {
  const checks: AccessCheck[] = [];
  const verbs = (group: string, resource: string, list: string[], ns?: string) => {
    for (const verb of list) checks.push({ verb, group, resource, namespace: ns });
  };
  verbs(RBAC, "clusterroles", ["create", "get", "delete"]);
  verbs(RBAC, "clusterrolebindings", ["create", "get", "delete"]);
  verbs("", "serviceaccounts", ["create", "get", "delete"], namespace);
  verbs(RBAC, "roles", ["create", "get", "delete"], namespace);
  verbs(RBAC, "rolebindings", ["create", "get", "delete"], namespace);
  verbs("", "configmaps", ["create", "get", "delete"], namespace);
  verbs("batch", "jobs", ["create", "get", "delete"], namespace);
  verbs("", "pods", ["list", "watch"], namespace);
  checks.push({ verb: "get", group: "", resource: "pods", subresource: "log", namespace });
  return checks;
}

/** The run's ClusterRole and Role: the caller must hold what they grant, unless it may escalate and bind. */
export function validatorGrants(namespace: string): Grant[] {
  return [
    { kind: "ClusterRole", rules: VALIDATOR_CLUSTER_RULES, grantedBy: "the run's ClusterRole" },
    {
      kind: "Role",
      namespace,
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
      grantedBy: "the run's Role",
    },
  ];
}

/** An isolated check the run will prepare: its namespace's name and the rules its identity gets. */
export interface IsolatedPlan {
  check: string;
  /** `aicr-<check>-<runID>`: its namespace, ServiceAccount, roles and bindings. */
  name: string;
  clusterRules: readonly CheckRule[];
  namespaceRules: readonly CheckRule[];
}

/** The isolated checks a run with this plan prepares, each with its names and rules. */
export function planIsolated(checks: readonly PlannedCheck[], recipe: Recipe, runId: string): IsolatedPlan[] {
  return isolatedEntries(checks).map((entry) => ({
    check: entry.name,
    name: checkJobName(entry.name, runId),
    clusterRules: entry.clusterRules?.(recipe) ?? [],
    namespaceRules: entry.namespaceRules ?? [],
  }));
}

/**
 * What preparing the isolated checks asks of the caller: create, read and delete their namespaces, their
 * ServiceAccounts (and read the namespace's `default` one), roles and bindings.
 */
export function isolatedCallerChecks(plans: readonly IsolatedPlan[]): AccessCheck[] {
  if (plans.length === 0) return [];
  const checks: AccessCheck[] = [];
  for (const verb of ["create", "get", "delete"]) checks.push({ verb, group: "", resource: "namespaces" });
  for (const verb of ["create", "get", "delete"])
    checks.push(
      { verb, group: RBAC, resource: "clusterroles" },
      { verb, group: RBAC, resource: "clusterrolebindings" },
    );
  for (const p of plans) {
    checks.push({ verb: "get", group: "", resource: "serviceaccounts", namespace: p.name });
    if (p.namespaceRules.length > 0)
      for (const verb of ["create", "get", "delete"])
        checks.push(
          { verb, group: RBAC, resource: "roles", namespace: p.name },
          { verb, group: RBAC, resource: "rolebindings", namespace: p.name },
        );
  }
  return checks.filter((c, i) => checks.findIndex((d) => JSON.stringify(d) === JSON.stringify(c)) === i);
}

/** Each isolated check's ClusterRole and Role: the caller must hold what they grant. */
export function isolatedGrants(plans: readonly IsolatedPlan[]): Grant[] {
  return plans.flatMap((p) => [
    ...(p.clusterRules.length > 0
      ? [{ kind: "ClusterRole" as const, rules: p.clusterRules, grantedBy: `check ${p.check}'s ClusterRole` }]
      : []),
    ...(p.namespaceRules.length > 0
      ? [
          {
            kind: "Role" as const,
            namespace: p.name,
            rules: p.namespaceRules,
            grantedBy: `check ${p.check}'s Role in namespace ${p.name}`,
          },
        ]
      : []),
  ]);
}

/**
 * The permission gate, access reviews only (nothing is created): every missing permission is listed
 * at once, before the first write.
 */
export async function checkValidatorPermissions(
  client: KubeClient,
  namespace: string,
  options: Pick<ReviewOptions, "signal"> & {
    /** check-nvidia-smi is planned: the caller lists the nodes to run it on. */
    listNodes?: boolean | undefined;
    /** The isolated checks planned (conformance and performance). */
    isolated?: readonly IsolatedPlan[] | undefined;
  } = {},
): Promise<void> {
  const isolated = options.isolated ?? [];
  const access = [...callerChecks(namespace), ...isolatedCallerChecks(isolated)];
  if (options.listNodes) access.push({ verb: "list", group: "", resource: "nodes" });
  await passGate(
    client,
    { access, grants: [...validatorGrants(namespace), ...isolatedGrants(isolated)] },
    {
      signal: options.signal,
      refusal: {
        message: (missing) =>
          `missing ${missing.length} permission(s) the validation run needs; nothing was created:${bulletList(missing)}`,
        remedy: `ask a cluster admin to grant these, or run with -n <a namespace you administer> (namespace now: ${namespace})`,
      },
    },
  );
}

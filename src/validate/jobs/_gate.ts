import { AicrError, bulletList } from "../../core/errors.ts";
import type { KubeClient } from "../../kube/client.ts";
import { type AccessCheck, describeMissing, type ReviewOptions, reviewAll } from "../../kube/reviews.ts";
import { VALIDATOR_CLUSTER_RULES } from "../_catalog.ts";

const RBAC = "rbac.authorization.k8s.io";

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

/** What the run's roles grant: the caller must hold it too, unless it may escalate and bind. */
export function grantedChecks(namespace: string): { clusterRole: AccessCheck[]; role: AccessCheck[] } {
  return {
    clusterRole: VALIDATOR_CLUSTER_RULES.flatMap((r) =>
      r.verbs.flatMap((verb) =>
        r.resources.map((resource) => ({ verb, group: r.apiGroups[0] ?? "", resource })),
      ),
    ),
    role: [{ verb: "get", group: "", resource: "configmaps", namespace }],
  };
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
  } = {},
): Promise<void> {
  const own = callerChecks(namespace);
  if (options.listNodes) own.push({ verb: "list", group: "", resource: "nodes" });
  const granted = grantedChecks(namespace);
  const escalation: AccessCheck[] = [
    { verb: "escalate", group: RBAC, resource: "clusterroles" },
    { verb: "bind", group: RBAC, resource: "clusterroles" },
    { verb: "escalate", group: RBAC, resource: "roles", namespace },
    { verb: "bind", group: RBAC, resource: "roles", namespace },
  ];
  const all = [...own, ...granted.clusterRole, ...granted.role, ...escalation];
  const answers = await reviewAll(client, all, options);
  const allowed = (c: AccessCheck) => answers[all.indexOf(c)]?.allowed === true;
  const missing = own.filter((c) => !allowed(c)).map((c) => describeMissing(c));
  const kinds = [
    ["ClusterRole", granted.clusterRole, escalation.slice(0, 2)],
    ["Role", granted.role, escalation.slice(2)],
  ] as const;
  for (const [kind, checks, esc] of kinds) {
    const lacking = checks.filter((c) => !allowed(c));
    if (lacking.length > 0 && !esc.every(allowed))
      missing.push(...lacking.map((c) => describeMissing(c, { grantedBy: `the run's ${kind}` })));
  }
  if (missing.length === 0) return;
  throw new AicrError(
    "UNAUTHORIZED",
    `missing ${missing.length} permission(s) the validation run needs; nothing was created:${bulletList(missing)}`,
    {
      remedy: `ask a cluster admin to grant these, or run with -n <a namespace you administer> (namespace now: ${namespace})`,
      context: { missing },
    },
  );
}

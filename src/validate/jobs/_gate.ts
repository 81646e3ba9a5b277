import { bulletList } from "../../core/errors.ts";
import type { KubeClient } from "../../kube/client.ts";
import { type Grant, passGate, RBAC_GROUP as RBAC } from "../../kube/gate.ts";
import type { AccessCheck, ReviewOptions } from "../../kube/reviews.ts";
import { VALIDATOR_CLUSTER_RULES } from "../_catalog.ts";

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
  const access = callerChecks(namespace);
  if (options.listNodes) access.push({ verb: "list", group: "", resource: "nodes" });
  await passGate(
    client,
    { access, grants: validatorGrants(namespace) },
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

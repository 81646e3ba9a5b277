/**
 * The fixed names aicr used before run isolation (v0.11.x). These objects belong to no run's created
 * set, so run cleanup never touches them; `aicr cleanup-legacy` is their one-time migration.
 */

export type LegacyKind =
  | "Job"
  | "ConfigMap"
  | "RoleBinding"
  | "ClusterRoleBinding"
  | "Role"
  | "ClusterRole"
  | "ServiceAccount";

export interface LegacyTarget {
  kind: LegacyKind;
  apiVersion: string;
  /** The API group and plural, as access reviews name them. */
  group: string;
  resource: string;
  name: string;
  namespaced: boolean;
}

const RBAC = "rbac.authorization.k8s.io";

export const LEGACY_CLUSTER_ROLE = "aicr-node-reader";
export const LEGACY_SNAPSHOT_JOB = "aicr";
export const LEGACY_VALIDATE_JOB = "aicr-validate";
export const LEGACY_AGENT_SA = "aicr";
export const LEGACY_VALIDATOR_SA = "aicr-validator";
export const LEGACY_VALIDATOR_BINDING = "aicr-validator";
export const LEGACY_SNAPSHOT_CONFIGMAP = "aicr-snapshot";
/** What the legacy validator's ClusterRoleBinding granted. */
export const VALIDATOR_CLUSTER_ROLE = "cluster-admin";

const target = (
  kind: LegacyKind,
  apiVersion: string,
  resource: string,
  name: string,
  namespaced: boolean,
): LegacyTarget => ({
  kind,
  apiVersion,
  group: apiVersion.includes("/") ? (apiVersion.split("/")[0] ?? "") : "",
  resource,
  name,
  namespaced,
});

/** Looked up once per cluster, whatever the namespace scope. */
export const CLUSTER_TARGETS: readonly LegacyTarget[] = [
  target("ClusterRoleBinding", `${RBAC}/v1`, "clusterrolebindings", LEGACY_CLUSTER_ROLE, false),
  target("ClusterRole", `${RBAC}/v1`, "clusterroles", LEGACY_CLUSTER_ROLE, false),
  target("ClusterRoleBinding", `${RBAC}/v1`, "clusterrolebindings", LEGACY_VALIDATOR_BINDING, false),
];

/** Looked up in every namespace in scope. */
export const NAMESPACED_TARGETS: readonly LegacyTarget[] = [
  target("Job", "batch/v1", "jobs", LEGACY_SNAPSHOT_JOB, true),
  target("Job", "batch/v1", "jobs", LEGACY_VALIDATE_JOB, true),
  target("ConfigMap", "v1", "configmaps", LEGACY_SNAPSHOT_CONFIGMAP, true),
  target("RoleBinding", `${RBAC}/v1`, "rolebindings", LEGACY_AGENT_SA, true),
  target("Role", `${RBAC}/v1`, "roles", LEGACY_AGENT_SA, true),
  target("ServiceAccount", "v1", "serviceaccounts", LEGACY_AGENT_SA, true),
  target("ServiceAccount", "v1", "serviceaccounts", LEGACY_VALIDATOR_SA, true),
];

export const ALL_TARGETS: readonly LegacyTarget[] = [...CLUSTER_TARGETS, ...NAMESPACED_TARGETS];

/** Deletion order: Jobs first (their pods stop using the RBAC), bindings before roles, accounts last. */
export const DELETE_ORDER: readonly LegacyKind[] = [
  "Job",
  "ConfigMap",
  "RoleBinding",
  "ClusterRoleBinding",
  "Role",
  "ClusterRole",
  "ServiceAccount",
];

export function apiVersionOf(kind: LegacyKind): string {
  return ALL_TARGETS.find((t) => t.kind === kind)?.apiVersion ?? "v1";
}

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

/** Where each kind lives in the API: what requests and access reviews name. */
const KINDS: Record<LegacyKind, Omit<LegacyTarget, "kind" | "name">> = {
  Job: { apiVersion: "batch/v1", group: "batch", resource: "jobs", namespaced: true },
  ConfigMap: { apiVersion: "v1", group: "", resource: "configmaps", namespaced: true },
  ServiceAccount: { apiVersion: "v1", group: "", resource: "serviceaccounts", namespaced: true },
  Role: { apiVersion: `${RBAC}/v1`, group: RBAC, resource: "roles", namespaced: true },
  RoleBinding: { apiVersion: `${RBAC}/v1`, group: RBAC, resource: "rolebindings", namespaced: true },
  ClusterRole: { apiVersion: `${RBAC}/v1`, group: RBAC, resource: "clusterroles", namespaced: false },
  ClusterRoleBinding: {
    apiVersion: `${RBAC}/v1`,
    group: RBAC,
    resource: "clusterrolebindings",
    namespaced: false,
  },
};

const target = (kind: LegacyKind, name: string): LegacyTarget => ({ kind, name, ...KINDS[kind] });

/** Looked up once per cluster, whatever the namespace scope. */
export const CLUSTER_TARGETS: readonly LegacyTarget[] = [
  target("ClusterRoleBinding", LEGACY_CLUSTER_ROLE),
  target("ClusterRole", LEGACY_CLUSTER_ROLE),
  target("ClusterRoleBinding", LEGACY_VALIDATOR_BINDING),
];

/** Looked up in every namespace in scope. */
export const NAMESPACED_TARGETS: readonly LegacyTarget[] = [
  target("Job", LEGACY_SNAPSHOT_JOB),
  target("Job", LEGACY_VALIDATE_JOB),
  target("ConfigMap", LEGACY_SNAPSHOT_CONFIGMAP),
  target("RoleBinding", LEGACY_AGENT_SA),
  target("Role", LEGACY_AGENT_SA),
  target("ServiceAccount", LEGACY_AGENT_SA),
  target("ServiceAccount", LEGACY_VALIDATOR_SA),
];

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
  return KINDS[kind].apiVersion;
}

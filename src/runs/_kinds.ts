/** The kinds a run creates (pods through its Job), read by label with list calls only. */
import { CLUSTER_ROLE_PREFIX, nameWithRunId, VALIDATOR_PREFIX } from "../run/names.ts";

export interface RunKind {
  apiVersion: string;
  kind: string;
  namespaced: boolean;
}

const RBAC = "rbac.authorization.k8s.io/v1";

export const RUN_KINDS: readonly RunKind[] = [
  { apiVersion: RBAC, kind: "ClusterRole", namespaced: false },
  { apiVersion: RBAC, kind: "ClusterRoleBinding", namespaced: false },
  { apiVersion: "v1", kind: "ServiceAccount", namespaced: true },
  { apiVersion: RBAC, kind: "Role", namespaced: true },
  { apiVersion: RBAC, kind: "RoleBinding", namespaced: true },
  { apiVersion: "batch/v1", kind: "Job", namespaced: true },
  { apiVersion: "v1", kind: "Pod", namespaced: true },
  { apiVersion: "v1", kind: "ConfigMap", namespaced: true },
];

/** The names a run's anchor ClusterRole can have: snapshot's agent, validate's validators. */
export const anchorNames = (runId: string): string[] =>
  [CLUSTER_ROLE_PREFIX, VALIDATOR_PREFIX].map((p) => nameWithRunId(p, runId));

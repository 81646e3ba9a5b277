/** Builders of observed legacy objects for the pure plan tests. */

import type { Observation, ObservedObject, Scope, Subject } from "../../../src/legacy/types.ts";
import { CLUSTER_BASELINE_RULES, NAMESPACED_RULES, toPolicyRule } from "../../../src/rbac/rules.ts";

let uid = 0;
const meta = (name: string, namespace?: string) => ({
  name,
  ...(namespace ? { namespace } : {}),
  uid: `uid-${++uid}`,
  resourceVersion: String(100 + uid),
  labels: {} as Record<string, string>,
});

const sa = (namespace: string, name = "aicr") => ({ kind: "ServiceAccount", name, namespace });

export const clusterRole = (rules = CLUSTER_BASELINE_RULES.map(toPolicyRule)): ObservedObject => ({
  kind: "ClusterRole",
  ...meta("aicr-node-reader"),
  rules,
  unusualRules: [],
  aggregated: false,
});

export const clusterRoleBinding = (subjects: Subject[] = [sa("gpu-operator")]): ObservedObject => ({
  kind: "ClusterRoleBinding",
  ...meta("aicr-node-reader"),
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "aicr-node-reader" },
  subjects,
});

export const validatorBinding = (namespace: string): ObservedObject => ({
  kind: "ClusterRoleBinding",
  ...meta("aicr-validator"),
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
  subjects: [sa(namespace, "aicr-validator")],
});

export const role = (namespace: string, rules = NAMESPACED_RULES.map(toPolicyRule)): ObservedObject => ({
  kind: "Role",
  ...meta("aicr", namespace),
  rules,
  unusualRules: [],
  aggregated: false,
});

export const roleBinding = (namespace: string): ObservedObject => ({
  kind: "RoleBinding",
  ...meta("aicr", namespace),
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "aicr" },
  subjects: [sa(namespace)],
});

export const serviceAccount = (namespace: string, name = "aicr"): ObservedObject => ({
  kind: "ServiceAccount",
  ...meta(name, namespace),
});

export const job = (
  namespace: string,
  state: { active?: number; finished?: boolean; name?: string; serviceAccountName?: string } = {},
): ObservedObject => ({
  kind: "Job",
  ...meta(state.name ?? "aicr", namespace),
  job: {
    serviceAccountName: state.serviceAccountName ?? "aicr",
    activePods: state.active ?? 0,
    finished: state.finished ?? true,
  },
});

export const configMap = (namespace: string): ObservedObject => ({
  kind: "ConfigMap",
  ...meta("aicr-snapshot", namespace),
});

/** The full legacy set of one namespace plus the cluster-scoped pair. */
export const legacySet = (namespace: string): ObservedObject[] => [
  clusterRole(),
  clusterRoleBinding([sa(namespace)]),
  job(namespace),
  configMap(namespace),
  roleBinding(namespace),
  role(namespace),
  serviceAccount(namespace),
];

export function observation(objects: ObservedObject[], extra: Partial<Observation> = {}): Observation {
  const scope: Scope = extra.scope ?? { allNamespaces: false, namespaces: ["gpu-operator"] };
  return { scope, objects, outsideJobs: [], unverified: [], ...extra };
}

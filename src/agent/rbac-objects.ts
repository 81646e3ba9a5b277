import { clusterRules, NAMESPACED_RULES, toPolicyRule } from "../rbac/rules.ts";
import type { RunNames } from "../run/names.ts";

/** An ownerReference to the run's anchor: deleting the anchor lets the garbage collector remove the run. */
export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

export const ownerReference = (owner: OwnerRef): OwnerRef & { blockOwnerDeletion: boolean } => ({
  ...owner,
  blockOwnerDeletion: false,
});

const RBAC = "rbac.authorization.k8s.io/v1";

interface Meta {
  names: RunNames;
  namespace: string;
  labels: Record<string, string>;
}

const meta = (name: string, m: Meta, options: { namespaced: boolean; owner?: OwnerRef | undefined }) => ({
  name,
  ...(options.namespaced ? { namespace: m.namespace } : {}),
  labels: { ...m.labels },
  ...(options.owner ? { ownerReferences: [ownerReference(options.owner)] } : {}),
});

/** The run's ClusterRole: the anchor in prefix mode, so it carries no owner itself. */
export function buildClusterRole(m: Meta & { discoverNetwork: boolean }) {
  return {
    apiVersion: RBAC,
    kind: "ClusterRole",
    metadata: meta(m.names.clusterRole, m, { namespaced: false }),
    rules: clusterRules({ discoverNetwork: m.discoverNetwork }).map(toPolicyRule),
  };
}

export function buildServiceAccount(m: Meta & { owner?: OwnerRef | undefined }) {
  return {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: meta(m.names.serviceAccount, m, { namespaced: true, owner: m.owner }),
  };
}

export function buildRole(m: Meta & { owner?: OwnerRef | undefined }) {
  return {
    apiVersion: RBAC,
    kind: "Role",
    metadata: meta(m.names.serviceAccount, m, { namespaced: true, owner: m.owner }),
    rules: NAMESPACED_RULES.map(toPolicyRule),
  };
}

const subject = (m: Meta) => [
  { kind: "ServiceAccount", name: m.names.serviceAccount, namespace: m.namespace },
];

export function buildRoleBinding(m: Meta & { owner?: OwnerRef | undefined }) {
  return {
    apiVersion: RBAC,
    kind: "RoleBinding",
    metadata: meta(m.names.serviceAccount, m, { namespaced: true, owner: m.owner }),
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: m.names.serviceAccount },
    subjects: subject(m),
  };
}

export function buildClusterRoleBinding(m: Meta & { owner?: OwnerRef | undefined }) {
  return {
    apiVersion: RBAC,
    kind: "ClusterRoleBinding",
    metadata: meta(m.names.clusterRole, m, { namespaced: false, owner: m.owner }),
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: m.names.clusterRole },
    subjects: subject(m),
  };
}

import type {
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ObjectMeta,
  V1OwnerReference,
  V1PolicyRule,
  V1Role,
  V1RoleBinding,
  V1ServiceAccount,
  V1Subject,
} from "../kube/types.ts";
import { clusterRules, NAMESPACED_RULES, toPolicyRule } from "./rules.ts";

/**
 * Pure builders of every RBAC object aicr creates or renders: the snapshot agent's run, the
 * validators' run, and the manifests of `aicr render-rbac`. Same input, same bytes (key order
 * included: rendered manifests are golden-tested).
 */

const RBAC_GROUP = "rbac.authorization.k8s.io";
const RBAC_V1 = `${RBAC_GROUP}/v1`;

/** The object an ownerReference points at: a run's anchor, whose deletion lets the garbage collector take the run. */
export type OwnerRef = Pick<V1OwnerReference, "apiVersion" | "kind" | "name" | "uid">;

/** Never blocks the owner's deletion: deleting the anchor must not wait on its dependents. */
export const ownerReference = (owner: OwnerRef): V1OwnerReference => ({
  apiVersion: owner.apiVersion,
  kind: owner.kind,
  name: owner.name,
  uid: owner.uid,
  blockOwnerDeletion: false,
});

export interface MetaInput {
  name: string;
  /** Absent for cluster-scoped objects. */
  namespace?: string | undefined;
  labels: Readonly<Record<string, string>>;
  owner?: OwnerRef | undefined;
}

/** What every builder sets in metadata. */
export type BuiltMeta = V1ObjectMeta & { name: string; labels: Record<string, string> };

export function objectMeta(m: MetaInput): BuiltMeta {
  return {
    name: m.name,
    ...(m.namespace === undefined ? {} : { namespace: m.namespace }),
    labels: { ...m.labels },
    ...(m.owner ? { ownerReferences: [ownerReference(m.owner)] } : {}),
  };
}

const clusterMeta = (m: MetaInput): BuiltMeta => objectMeta({ ...m, namespace: undefined });

type Built<T> = T & { apiVersion: string; kind: string; metadata: BuiltMeta };
export type ServiceAccount = Built<V1ServiceAccount>;
export type Role = Built<V1Role> & { rules: V1PolicyRule[] };
export type RoleBinding = Built<V1RoleBinding> & { subjects: V1Subject[] };
export type ClusterRole = Built<V1ClusterRole> & { rules: V1PolicyRule[] };
export type ClusterRoleBinding = Built<V1ClusterRoleBinding> & { subjects: V1Subject[] };

export const serviceAccountSubject = (sa: { namespace: string; name: string }): V1Subject => ({
  kind: "ServiceAccount",
  name: sa.name,
  namespace: sa.namespace,
});

export const buildServiceAccount = (meta: MetaInput): ServiceAccount => ({
  apiVersion: "v1",
  kind: "ServiceAccount",
  metadata: objectMeta(meta),
});

export const buildRole = (meta: MetaInput, rules: readonly V1PolicyRule[]): Role => ({
  apiVersion: RBAC_V1,
  kind: "Role",
  metadata: objectMeta(meta),
  rules: [...rules],
});

export const buildRoleBinding = (
  meta: MetaInput,
  binding: { role: string; subjects: readonly V1Subject[] },
): RoleBinding => ({
  apiVersion: RBAC_V1,
  kind: "RoleBinding",
  metadata: objectMeta(meta),
  roleRef: { apiGroup: RBAC_GROUP, kind: "Role", name: binding.role },
  subjects: [...binding.subjects],
});

export const buildClusterRole = (meta: MetaInput, rules: readonly V1PolicyRule[]): ClusterRole => ({
  apiVersion: RBAC_V1,
  kind: "ClusterRole",
  metadata: clusterMeta(meta),
  rules: [...rules],
});

export const buildClusterRoleBinding = (
  meta: MetaInput,
  binding: { clusterRole: string; subjects: readonly V1Subject[] },
): ClusterRoleBinding => ({
  apiVersion: RBAC_V1,
  kind: "ClusterRoleBinding",
  metadata: clusterMeta(meta),
  roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: binding.clusterRole },
  subjects: [...binding.subjects],
});

/**
 * The snapshot agent's grant, shared by a run (its own ServiceAccount, owned by the run's anchor)
 * and by render-rbac (an existing ServiceAccount, no owner): the rules come from the catalog.
 */
export interface AgentRbacInput {
  names: {
    /** The ServiceAccount the bindings grant to. */
    serviceAccount: string;
    /** The Role and RoleBinding; a run names them after its ServiceAccount. */
    role?: string | undefined;
    /** The ClusterRole and ClusterRoleBinding. */
    clusterRole: string;
  };
  namespace: string;
  labels: Readonly<Record<string, string>>;
  owner?: OwnerRef | undefined;
}

const roleName = (g: AgentRbacInput): string => g.names.role ?? g.names.serviceAccount;
const agentSubjects = (g: AgentRbacInput): V1Subject[] => [
  serviceAccountSubject({ namespace: g.namespace, name: g.names.serviceAccount }),
];

/** The ClusterRole: the anchor of a run, so it never carries an owner itself. */
export const buildAgentClusterRole = (g: AgentRbacInput & { discoverNetwork: boolean }): ClusterRole =>
  buildClusterRole(
    { name: g.names.clusterRole, labels: g.labels },
    clusterRules({ discoverNetwork: g.discoverNetwork }).map(toPolicyRule),
  );

export const buildAgentServiceAccount = (g: AgentRbacInput): ServiceAccount =>
  buildServiceAccount({ ...g, name: g.names.serviceAccount });

export const buildAgentRole = (g: AgentRbacInput): Role =>
  buildRole({ ...g, name: roleName(g) }, NAMESPACED_RULES.map(toPolicyRule));

export const buildAgentRoleBinding = (g: AgentRbacInput): RoleBinding =>
  buildRoleBinding({ ...g, name: roleName(g) }, { role: roleName(g), subjects: agentSubjects(g) });

export const buildAgentClusterRoleBinding = (g: AgentRbacInput): ClusterRoleBinding =>
  buildClusterRoleBinding(
    { ...g, name: g.names.clusterRole },
    { clusterRole: g.names.clusterRole, subjects: agentSubjects(g) },
  );

/** Plain Kubernetes JSON shapes used by the RBAC evaluator. */

export interface UserInfo {
  username: string;
  groups: string[];
}

export interface ResourceAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface NonResourceAttributes {
  verb: string;
  path: string;
}

export type Attributes = ResourceAttributes | NonResourceAttributes;

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface RoleRef {
  apiGroup?: string;
  kind: string;
  name: string;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
}

export interface RoleObject {
  metadata: ObjectMeta;
  rules?: PolicyRule[] | null;
  aggregationRule?: { clusterRoleSelectors?: { matchLabels?: Record<string, string> }[] };
}

export interface BindingObject {
  metadata: ObjectMeta;
  subjects?: Subject[] | null;
  roleRef: RoleRef;
}

export interface RbacSnapshot {
  roles: RoleObject[];
  roleBindings: BindingObject[];
  clusterRoles: RoleObject[];
  clusterRoleBindings: BindingObject[];
}

export const RBAC_GROUP = "rbac.authorization.k8s.io";
export const SYSTEM_MASTERS = "system:masters";

export function isResourceAttributes(a: Attributes): a is ResourceAttributes {
  return "resource" in a;
}

/**
 * The resource registry: every kind the fake apiserver serves, with the facts discovery and the
 * REST layer need (group, version, plural, kind, scope, shortNames, subresources, verbs).
 */

export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames: string[];
  /** Subresources served below the object path, e.g. "status", "log". */
  subresources: string[];
  verbs: string[];
  categories?: string[];
  /** Kept in memory (false for access reviews, which are answered and forgotten). */
  stored: boolean;
  /** The registry tracks metadata.generation (kinds with a spec: Jobs, custom resources). */
  generation?: boolean;
}

const CRUD = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

function rt(
  group: string,
  version: string,
  plural: string,
  kind: string,
  namespaced: boolean,
  extra: Partial<ResourceType> = {},
): ResourceType {
  return {
    group,
    version,
    plural,
    singular: kind.toLowerCase(),
    kind,
    namespaced,
    shortNames: [],
    subresources: [],
    verbs: CRUD,
    stored: true,
    ...extra,
  };
}

const RBAC = "rbac.authorization.k8s.io";
const AUTHZ = "authorization.k8s.io";

export const RESOURCES: readonly ResourceType[] = [
  rt("", "v1", "namespaces", "Namespace", false, {
    shortNames: ["ns"],
    subresources: ["status"],
    verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
  }),
  rt("", "v1", "serviceaccounts", "ServiceAccount", true, { shortNames: ["sa"] }),
  rt("", "v1", "configmaps", "ConfigMap", true, { shortNames: ["cm"] }),
  rt("", "v1", "pods", "Pod", true, {
    shortNames: ["po"],
    subresources: ["status", "log", "exec"],
    categories: ["all"],
  }),
  rt("", "v1", "nodes", "Node", false, { shortNames: ["no"], subresources: ["status"] }),
  rt("", "v1", "events", "Event", true, { shortNames: ["ev"] }),
  rt("batch", "v1", "jobs", "Job", true, { subresources: ["status"], categories: ["all"], generation: true }),
  rt(RBAC, "v1", "roles", "Role", true),
  rt(RBAC, "v1", "rolebindings", "RoleBinding", true),
  rt(RBAC, "v1", "clusterroles", "ClusterRole", false),
  rt(RBAC, "v1", "clusterrolebindings", "ClusterRoleBinding", false),
  rt("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", false),
  // Stored only (no policy is enforced: the fake has no network): examples/agent-networkpolicy.yaml.
  rt("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", true, {
    shortNames: ["netpol"],
    generation: true,
  }),
  // Served as if a CustomResourceDefinition were installed; the CRD object itself is not served.
  rt("nvidia.com", "v1", "clusterpolicies", "ClusterPolicy", false, {
    subresources: ["status"],
    generation: true,
  }),
  rt(AUTHZ, "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", false, {
    verbs: ["create"],
    stored: false,
  }),
  rt(AUTHZ, "v1", "subjectaccessreviews", "SubjectAccessReview", false, { verbs: ["create"], stored: false }),
  // `kubectl auth whoami`: answers who the request authenticated as (after impersonation).
  rt("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", false, {
    verbs: ["create"],
    stored: false,
  }),
];

export function apiVersionOf(r: ResourceType): string {
  return r.group === "" ? r.version : `${r.group}/${r.version}`;
}

/** "configmaps" for the core group, "jobs.batch" otherwise — the form error messages use. */
export function qualifiedResource(r: ResourceType): string {
  return r.group === "" ? r.plural : `${r.plural}.${r.group}`;
}

export function findResource(group: string, version: string, plural: string): ResourceType | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);
}

/** Looks a resource up by `apiVersion` and `kind`, as written in an object or an ownerReference. */
export function resourceForKind(apiVersion: string, kind: string): ResourceType | undefined {
  return RESOURCES.find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
}

/** Shorthand for tests and controllers: `resource("pods")`, `resource("jobs")`. Throws if unknown. */
export function resource(plural: string): ResourceType {
  const found = RESOURCES.find((r) => r.plural === plural);
  if (!found) throw new Error(`unknown resource ${plural}`);
  return found;
}

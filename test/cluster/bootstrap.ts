/** What a fresh cluster holds before anyone writes: system namespaces and the default RBAC policy. */
import type { KObject } from "./objects.ts";
import { resource } from "./resources.ts";
import type { Store } from "./store.ts";

const BOOTSTRAP_META = {
  labels: { "kubernetes.io/bootstrapping": "rbac-defaults" },
  annotations: { "rbac.authorization.kubernetes.io/autoupdate": "true" },
};

const READ = ["get", "list", "watch"];
const WRITE = ["create", "delete", "deletecollection", "patch", "update"];
const CORE_RESOURCES = ["pods", "pods/log", "pods/status", "configmaps", "serviceaccounts", "events"];

function clusterRole(name: string, rules: object[]): KObject {
  return { metadata: { name, ...structuredClone(BOOTSTRAP_META) }, rules };
}

function groupBinding(name: string, role: string, groups: string[]): KObject {
  return {
    metadata: { name, ...structuredClone(BOOTSTRAP_META) },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: groups.map((g) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: g })),
  };
}

// Simplification: admin/edit/view cover only the resources this fake serves, without aggregation.
const ROLES: KObject[] = [
  clusterRole("cluster-admin", [
    { apiGroups: ["*"], resources: ["*"], verbs: ["*"] },
    { nonResourceURLs: ["*"], verbs: ["*"] },
  ]),
  clusterRole("admin", [
    { apiGroups: [""], resources: CORE_RESOURCES, verbs: [...READ, ...WRITE] },
    { apiGroups: [""], resources: ["pods/exec"], verbs: ["create", "get"] },
    { apiGroups: ["batch"], resources: ["jobs", "jobs/status"], verbs: [...READ, ...WRITE] },
    {
      apiGroups: ["rbac.authorization.k8s.io"],
      resources: ["roles", "rolebindings"],
      verbs: [...READ, ...WRITE],
    },
  ]),
  clusterRole("edit", [
    { apiGroups: [""], resources: CORE_RESOURCES, verbs: [...READ, ...WRITE] },
    { apiGroups: ["batch"], resources: ["jobs"], verbs: [...READ, ...WRITE] },
  ]),
  clusterRole("view", [
    { apiGroups: [""], resources: CORE_RESOURCES, verbs: READ },
    { apiGroups: ["batch"], resources: ["jobs", "jobs/status"], verbs: READ },
  ]),
  clusterRole("system:basic-user", [
    {
      apiGroups: ["authorization.k8s.io"],
      resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
      verbs: ["create"],
    },
    { apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"], verbs: ["create"] },
  ]),
  clusterRole("system:discovery", [
    {
      nonResourceURLs: [
        "/api",
        "/api/*",
        "/apis",
        "/apis/*",
        "/healthz",
        "/livez",
        "/openapi",
        "/openapi/*",
        "/readyz",
        "/version",
        "/version/",
      ],
      verbs: ["get"],
    },
  ]),
  clusterRole("system:public-info-viewer", [
    { nonResourceURLs: ["/healthz", "/livez", "/readyz", "/version", "/version/"], verbs: ["get"] },
  ]),
];

const BINDINGS: KObject[] = [
  groupBinding("cluster-admin", "cluster-admin", ["system:masters"]),
  groupBinding("system:basic-user", "system:basic-user", ["system:authenticated"]),
  groupBinding("system:discovery", "system:discovery", ["system:authenticated"]),
  groupBinding("system:public-info-viewer", "system:public-info-viewer", [
    "system:authenticated",
    "system:unauthenticated",
  ]),
];

export const SYSTEM_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"];

export function bootstrap(store: Store): void {
  for (const name of SYSTEM_NAMESPACES) store.create(resource("namespaces"), { metadata: { name } });
  for (const role of ROLES) store.create(resource("clusterroles"), role);
  for (const b of BINDINGS) store.create(resource("clusterrolebindings"), b);
}

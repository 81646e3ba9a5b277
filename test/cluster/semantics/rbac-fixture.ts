/** Shared RBAC fixture for the rbac tests: a GPU namespace agent, a developer, and their bindings. */
import type { Attributes, RbacSnapshot, UserInfo } from "./rbac.ts";

export const sa = (ns: string, name: string): UserInfo => ({
  username: `system:serviceaccount:${ns}:${name}`,
  groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"],
});
export const alice: UserInfo = { username: "alice", groups: ["devs", "system:authenticated"] };
export const admin: UserInfo = { username: "admin", groups: ["system:masters"] };
export const agent = sa("gpu", "aicr-run");

export const rbac: RbacSnapshot = {
  clusterRoles: [
    {
      metadata: { name: "node-reader" },
      rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["get", "list"] }],
    },
    { metadata: { name: "urls" }, rules: [{ nonResourceURLs: ["/healthz", "/metrics/*"], verbs: ["get"] }] },
    { metadata: { name: "scaler" }, rules: [{ apiGroups: ["*"], resources: ["*/scale"], verbs: ["*"] }] },
    {
      metadata: { name: "agg" },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "agg/to": "yes" } }] },
      rules: [],
    },
    {
      metadata: { name: "agg-part", labels: { "agg/to": "yes" } },
      rules: [{ apiGroups: ["batch"], resources: ["jobs"], verbs: ["list"] }],
    },
  ],
  clusterRoleBindings: [
    {
      metadata: { name: "devs-nodes" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "node-reader" },
      subjects: [{ kind: "Group", name: "devs" }],
    },
    {
      metadata: { name: "alice-urls" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "urls" },
      subjects: [{ kind: "User", name: "alice" }],
    },
    {
      metadata: { name: "alice-agg" },
      roleRef: { kind: "ClusterRole", name: "agg" },
      subjects: [{ kind: "User", name: "alice" }],
    },
  ],
  roles: [
    {
      metadata: { name: "agent", namespace: "gpu" },
      rules: [
        { apiGroups: [""], resources: ["configmaps"], verbs: ["create", "get", "update"] },
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "delete"], resourceNames: ["mine"] },
        { apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get", "list"] },
      ],
    },
  ],
  roleBindings: [
    {
      metadata: { name: "agent", namespace: "gpu" },
      roleRef: { kind: "Role", name: "agent" },
      // No namespace: defaults to the binding's namespace.
      subjects: [{ kind: "ServiceAccount", name: "aicr-run" }],
    },
    {
      metadata: { name: "alice-scaler", namespace: "gpu" },
      roleRef: { kind: "ClusterRole", name: "scaler" },
      subjects: [{ kind: "User", name: "alice" }],
    },
    {
      metadata: { name: "dangling", namespace: "gpu" },
      roleRef: { kind: "Role", name: "gone" },
      subjects: [{ kind: "User", name: "bob" }],
    },
  ],
};

export const r = (verb: string, resource: string, extra: Partial<Attributes> = {}): Attributes => ({
  verb,
  group: "",
  resource,
  ...extra,
});

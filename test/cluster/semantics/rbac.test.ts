import { describe, expect, test } from "bun:test";
import { type Attributes, authorize, forbiddenMessage, type UserInfo } from "./rbac.ts";
import { admin, agent, alice, r, rbac, sa } from "./rbac-fixture.ts";

describe("authorize", () => {
  test.each([
    ["masters can do anything", admin, r("delete", "nodes", { name: "x" }), true],
    ["group via ClusterRoleBinding, cluster scope", alice, r("list", "nodes"), true],
    ["verb not granted", alice, r("delete", "nodes", { name: "n" }), false],
    ["role binding in its namespace", agent, r("create", "configmaps", { namespace: "gpu" }), true],
    [
      "role binding not in another namespace",
      agent,
      r("create", "configmaps", { namespace: "other" }),
      false,
    ],
    [
      "subresource pods/log granted",
      agent,
      r("get", "pods", { subresource: "log", namespace: "gpu", name: "p" }),
      true,
    ],
    [
      "pods/exec not granted",
      agent,
      r("create", "pods", { subresource: "exec", namespace: "gpu", name: "p" }),
      false,
    ],
    ["resourceNames match", agent, r("delete", "configmaps", { namespace: "gpu", name: "mine" }), true],
    ["resourceNames mismatch", agent, r("delete", "configmaps", { namespace: "gpu", name: "other" }), false],
    ["resourceNames never match list", agent, r("list", "configmaps", { namespace: "gpu" }), false],
    [
      "*/scale any group",
      alice,
      r("patch", "deployments", { group: "apps", subresource: "scale", namespace: "gpu" }),
      true,
    ],
    [
      "*/scale is not the resource",
      alice,
      r("patch", "deployments", { group: "apps", namespace: "gpu" }),
      false,
    ],
    ["nonResourceURL exact", alice, { verb: "get", path: "/healthz" }, true],
    ["nonResourceURL prefix", alice, { verb: "get", path: "/metrics/cadvisor" }, true],
    ["nonResourceURL no match", alice, { verb: "get", path: "/version" }, false],
    ["aggregated cluster role", alice, r("list", "jobs", { group: "batch" }), true],
    [
      "sa of another namespace",
      sa("other", "aicr-run"),
      r("get", "pods", { namespace: "gpu", name: "p" }),
      false,
    ],
  ] as [string, UserInfo, Attributes, boolean][])("%s", (_name, user, attrs, want) => {
    expect(authorize(user, attrs, rbac).allowed).toBe(want);
  });

  test("allowed reason names the binding", () => {
    expect(authorize(agent, r("get", "pods", { namespace: "gpu", name: "p" }), rbac).reason).toBe(
      'RBAC: allowed by RoleBinding "agent/gpu" of Role "agent" to ServiceAccount "aicr-run/gpu"',
    );
  });

  test("dangling roleRef is reported in the deny reason", () => {
    const res = authorize({ username: "bob", groups: [] }, r("get", "pods", { namespace: "gpu" }), rbac);
    expect(res).toEqual({ allowed: false, reason: 'RBAC: role.rbac.authorization.k8s.io "gone" not found' });
  });
});

describe("forbiddenMessage", () => {
  test.each([
    [
      agent,
      r("create", "configmaps", { namespace: "ns", name: "x" }),
      'configmaps "x" is forbidden: User "system:serviceaccount:gpu:aicr-run" cannot create resource "configmaps" in API group "" in the namespace "ns"',
    ],
    [
      alice,
      r("list", "nodes"),
      'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
    ],
    [
      alice,
      r("get", "pods", { subresource: "log", namespace: "a", name: "p" }),
      'pods "p" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "a"',
    ],
    [
      alice,
      r("create", "jobs", { group: "batch", namespace: "a" }),
      'jobs.batch is forbidden: User "alice" cannot create resource "jobs" in API group "batch" in the namespace "a"',
    ],
    [alice, { verb: "get", path: "/version" }, 'forbidden: User "alice" cannot get path "/version"'],
  ] as [UserInfo, Attributes, string][])("%#", (user, attrs, want) => {
    expect(forbiddenMessage(user, attrs)).toBe(want);
  });
});

import { describe, expect, test } from "bun:test";
import {
  checkBindingWrite,
  checkEscalation,
  checkRoleWrite,
  compactRuleString,
  type RbacSnapshot,
} from "./rbac.ts";
import { admin, agent, alice, rbac } from "./rbac-fixture.ts";

describe("escalation", () => {
  test("rules held in the namespace are covered", () => {
    const res = checkEscalation(
      agent,
      "gpu",
      [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
      rbac,
    );
    expect(res.allowed).toBe(true);
  });

  test("scoped to namespace: the same rule elsewhere is an escalation", () => {
    const res = checkEscalation(
      agent,
      "other",
      [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
      rbac,
    );
    expect(res.allowed).toBe(false);
    expect(res.missing.map(compactRuleString)).toEqual([
      '{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}',
    ]);
  });

  test("resourceNames-limited holdings do not cover an unnamed grant", () => {
    const res = checkEscalation(
      agent,
      "gpu",
      [{ apiGroups: [""], resources: ["configmaps"], verbs: ["delete"] }],
      rbac,
    );
    expect(res.allowed).toBe(false);
    const named = [
      { apiGroups: [""], resources: ["configmaps"], verbs: ["delete"], resourceNames: ["mine"] },
    ];
    expect(checkEscalation(agent, "gpu", named, rbac).allowed).toBe(true);
  });

  test("*/scale covers x/scale but not x", () => {
    const ok = [{ apiGroups: ["apps"], resources: ["deployments/scale"], verbs: ["get"] }];
    const bad = [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["get"] }];
    expect(checkEscalation(alice, "gpu", ok, rbac).allowed).toBe(true);
    expect(checkEscalation(alice, "gpu", bad, rbac).allowed).toBe(false);
  });

  test("nonResourceURL prefix covers", () => {
    expect(
      checkEscalation(alice, undefined, [{ nonResourceURLs: ["/metrics/x"], verbs: ["get"] }], rbac).allowed,
    ).toBe(true);
    expect(
      checkEscalation(alice, undefined, [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }], rbac).allowed,
    ).toBe(false);
  });

  test("Role write denied with the real message, missing verbs compacted", () => {
    const role = {
      metadata: { name: "r", namespace: "gpu" },
      rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] }],
    };
    const res = checkRoleWrite(agent, "Role", role, rbac);
    expect(res).toEqual({
      allowed: false,
      message:
        'roles.rbac.authorization.k8s.io "r" is forbidden: user "system:serviceaccount:gpu:aicr-run" (groups=["system:serviceaccounts" "system:serviceaccounts:gpu" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
    });
    expect(checkRoleWrite(admin, "Role", role, rbac).allowed).toBe(true);
  });

  test("escalate verb allows a Role write", () => {
    const withEscalate: RbacSnapshot = {
      ...rbac,
      clusterRoles: [
        ...rbac.clusterRoles,
        {
          metadata: { name: "esc" },
          rules: [{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs: ["escalate"] }],
        },
      ],
      roleBindings: [
        ...rbac.roleBindings,
        {
          metadata: { name: "esc", namespace: "gpu" },
          roleRef: { kind: "ClusterRole", name: "esc" },
          subjects: [{ kind: "ServiceAccount", name: "aicr-run", namespace: "gpu" }],
        },
      ],
    };
    const role = {
      metadata: { name: "r", namespace: "gpu" },
      rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
    };
    expect(checkRoleWrite(agent, "Role", role, withEscalate).allowed).toBe(true);
  });

  test("binding write: holding the role's rules, bind verb, or denied", () => {
    const toAgentRole = {
      metadata: { name: "b", namespace: "gpu" },
      roleRef: { kind: "Role", name: "agent" },
      subjects: [],
    };
    expect(checkBindingWrite(agent, "RoleBinding", toAgentRole, rbac).allowed).toBe(true);
    const toNodeReader = {
      metadata: { name: "b" },
      roleRef: { kind: "ClusterRole", name: "node-reader" },
      subjects: [],
    };
    const denied = checkBindingWrite(agent, "ClusterRoleBinding", toNodeReader, rbac);
    expect(denied.allowed).toBe(false);
    if (!denied.allowed)
      expect(denied.message).toStartWith(
        'clusterrolebindings.rbac.authorization.k8s.io "b" is forbidden: user',
      );
    const withBind: RbacSnapshot = {
      ...rbac,
      clusterRoles: [
        ...rbac.clusterRoles,
        {
          metadata: { name: "binder" },
          rules: [
            {
              apiGroups: ["rbac.authorization.k8s.io"],
              resources: ["clusterroles"],
              verbs: ["bind"],
              resourceNames: ["node-reader"],
            },
          ],
        },
      ],
      clusterRoleBindings: [
        ...rbac.clusterRoleBindings,
        {
          metadata: { name: "binder" },
          roleRef: { kind: "ClusterRole", name: "binder" },
          subjects: [{ kind: "ServiceAccount", name: "aicr-run", namespace: "gpu" }],
        },
      ],
    };
    expect(checkBindingWrite(agent, "ClusterRoleBinding", toNodeReader, withBind).allowed).toBe(true);
  });

  test("binding to a missing role is NotFound, naming the role as a binding (as kube-apiserver 1.36 does)", () => {
    const b = {
      metadata: { name: "b", namespace: "gpu" },
      roleRef: { kind: "Role", name: "nope" },
      subjects: [],
    };
    const res = checkBindingWrite(agent, "RoleBinding", b, rbac);
    expect(res).toEqual({
      allowed: false,
      message: 'rolebindings.rbac.authorization.k8s.io "nope" not found',
      notFound: { resource: "rolebindings", name: "nope" },
    });
  });
});

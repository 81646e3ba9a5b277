import { describe, expect, test } from "bun:test";
import {
  buildAgentClusterRole,
  buildAgentClusterRoleBinding,
  buildAgentRole,
  buildAgentRoleBinding,
  buildAgentServiceAccount,
  buildClusterRole,
  buildClusterRoleBinding,
  buildRole,
  buildRoleBinding,
  buildServiceAccount,
  objectMeta,
  ownerReference,
} from "../../../src/rbac/objects.ts";
import {
  CLUSTER_BASELINE_RULES,
  clusterRules,
  DISCOVER_NETWORK_RULES,
  NAMESPACED_RULES,
  toPolicyRule,
} from "../../../src/rbac/rules.ts";
import { runNames } from "../../../src/run/names.ts";

const RUN = "20260821-142233-9f3a1c0b7e2d4a55";
const names = runNames({ runId: RUN });
const labels = { "app.kubernetes.io/name": "aicr", "aicr.run/run-id": RUN };
const run = { names, namespace: "ns", labels };
const anchor = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  name: names.clusterRole,
  uid: "u-1",
};
const owned = { ...run, owner: anchor };

describe("the agent run's RBAC", () => {
  test("names: Role and RoleBinding after the ServiceAccount, the ClusterRoleBinding after the ClusterRole", () => {
    expect(buildAgentServiceAccount(run).metadata.name).toBe(names.serviceAccount);
    expect(buildAgentRole(run).metadata.name).toBe(names.serviceAccount);
    expect(buildAgentRoleBinding(run).metadata.name).toBe(names.serviceAccount);
    expect(buildAgentClusterRole({ ...run, discoverNetwork: false }).metadata.name).toBe(names.clusterRole);
    expect(buildAgentClusterRoleBinding(run).metadata.name).toBe(names.clusterRole);
  });

  test("namespaced objects carry the namespace, cluster-scoped ones none; every object the run's labels", () => {
    const namespaced = [buildAgentServiceAccount(run), buildAgentRole(run), buildAgentRoleBinding(run)];
    const cluster = [
      buildAgentClusterRole({ ...run, discoverNetwork: false }),
      buildAgentClusterRoleBinding(run),
    ];
    for (const o of namespaced) expect(o.metadata.namespace).toBe("ns");
    for (const o of cluster) expect("namespace" in o.metadata).toBe(false);
    for (const o of [...namespaced, ...cluster]) {
      expect(o.metadata.labels).toEqual(labels);
      expect(o.metadata.labels).not.toBe(labels);
    }
  });

  test("rules come from the catalog: the Role 2, the ClusterRole 6, or 8 with discover-network", () => {
    expect(buildAgentRole(run).rules).toEqual(NAMESPACED_RULES.map(toPolicyRule));
    expect(buildAgentRole(run).rules).toHaveLength(2);
    const baseline = buildAgentClusterRole({ ...run, discoverNetwork: false }).rules;
    expect(baseline).toEqual(CLUSTER_BASELINE_RULES.map(toPolicyRule));
    expect(baseline).toHaveLength(6);
    const discovery = buildAgentClusterRole({ ...run, discoverNetwork: true }).rules;
    expect(discovery).toEqual(clusterRules({ discoverNetwork: true }).map(toPolicyRule));
    expect(discovery).toHaveLength(CLUSTER_BASELINE_RULES.length + DISCOVER_NETWORK_RULES.length);
    expect(discovery).toHaveLength(8);
    // The catalog's reasons stay out of the objects.
    expect(JSON.stringify(discovery)).not.toContain("reason");
  });

  test("a built rule is a fresh copy: changing it leaves the catalog alone", () => {
    const role = buildAgentRole(run);
    role.rules[0]?.verbs.push("delete");
    expect(NAMESPACED_RULES[0]?.verbs).not.toContain("delete");
  });

  test("bindings grant the run's own roles to the run's ServiceAccount", () => {
    const subjects = [{ kind: "ServiceAccount", name: names.serviceAccount, namespace: "ns" }];
    expect(buildAgentRoleBinding(run).roleRef).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: names.serviceAccount,
    });
    expect(buildAgentRoleBinding(run).subjects).toEqual(subjects);
    expect(buildAgentClusterRoleBinding(run).roleRef).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "ClusterRole",
      name: names.clusterRole,
    });
    expect(buildAgentClusterRoleBinding(run).subjects).toEqual(subjects);
  });

  test("dependents carry one non-blocking ownerReference to the anchor; the anchor carries none", () => {
    for (const o of [
      buildAgentServiceAccount(owned),
      buildAgentRole(owned),
      buildAgentRoleBinding(owned),
      buildAgentClusterRoleBinding(owned),
    ]) {
      expect(o.metadata.ownerReferences).toEqual([{ ...anchor, blockOwnerDeletion: false }]);
    }
    expect("ownerReferences" in buildAgentClusterRole({ ...owned, discoverNetwork: false }).metadata).toBe(
      false,
    );
    expect("ownerReferences" in buildAgentServiceAccount(run).metadata).toBe(false);
  });

  test("an explicit Role name (render-rbac) names the Role, the RoleBinding and its roleRef", () => {
    const grant = {
      ...run,
      names: { serviceAccount: "gpu-sa", role: "aicr-agent-gpu-sa-rbac", clusterRole: "cr" },
    };
    expect(buildAgentRole(grant).metadata.name).toBe("aicr-agent-gpu-sa-rbac");
    expect(buildAgentRoleBinding(grant).metadata.name).toBe("aicr-agent-gpu-sa-rbac");
    expect(buildAgentRoleBinding(grant).roleRef.name).toBe("aicr-agent-gpu-sa-rbac");
    expect(buildAgentRoleBinding(grant).subjects).toEqual([
      { kind: "ServiceAccount", name: "gpu-sa", namespace: "ns" },
    ]);
  });
});

describe("the generic builders", () => {
  const meta = { name: "x", namespace: "ns", labels: { a: "b" }, owner: anchor };

  test("ownerReference: the four identifying fields, then blockOwnerDeletion false", () => {
    const ref = ownerReference({ ...anchor, extra: "dropped" } as typeof anchor);
    expect(Object.keys(ref)).toEqual(["apiVersion", "kind", "name", "uid", "blockOwnerDeletion"]);
    expect(ref.blockOwnerDeletion).toBe(false);
  });

  test("metadata: name, namespace, labels, ownerReferences, in that order; absent ones left out", () => {
    expect(Object.keys(objectMeta(meta))).toEqual(["name", "namespace", "labels", "ownerReferences"]);
    expect(objectMeta({ name: "x", labels: {} })).toEqual({ name: "x", labels: {} });
  });

  test("cluster-scoped builders drop a namespace they are given", () => {
    expect("namespace" in buildClusterRole(meta, []).metadata).toBe(false);
    expect("namespace" in buildClusterRoleBinding(meta, { clusterRole: "c", subjects: [] }).metadata).toBe(
      false,
    );
    expect(buildRole(meta, []).metadata.namespace).toBe("ns");
    expect(buildServiceAccount(meta).metadata.namespace).toBe("ns");
  });

  test("the same input gives the same bytes, keys in Kubernetes order", () => {
    const binding = buildRoleBinding(meta, {
      role: "r",
      subjects: [{ kind: "ServiceAccount", name: "sa", namespace: "ns" }],
    });
    expect(JSON.stringify(binding)).toBe(
      JSON.stringify({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: {
          name: "x",
          namespace: "ns",
          labels: { a: "b" },
          ownerReferences: [{ ...anchor, blockOwnerDeletion: false }],
        },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "r" },
        subjects: [{ kind: "ServiceAccount", name: "sa", namespace: "ns" }],
      }),
    );
    expect(JSON.stringify(buildRole(meta, [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }]))).toBe(
      JSON.stringify(buildRole(meta, [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }])),
    );
  });
});

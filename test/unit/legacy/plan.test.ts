import { describe, expect, test } from "bun:test";
import { buildPlan, toDelete } from "../../../src/legacy/_plan.ts";
import { ORIGINAL_DISCOVER_NETWORK_RULES } from "../../../src/legacy/_rule-subset.ts";
import type { Plan, PlanEntry } from "../../../src/legacy/types.ts";
import { CLUSTER_BASELINE_RULES, DISCOVER_NETWORK_RULES, toPolicyRule } from "../../../src/rbac/rules.ts";
import {
  clusterRole,
  clusterRoleBinding,
  configMap,
  job,
  legacySet,
  observation,
  role,
  roleBinding,
  serviceAccount,
  validatorBinding,
} from "./_observed.ts";

const defaults = { force: false, includeConfigMaps: false };
const line = (e: PlanEntry): string =>
  `${e.action} ${e.kind} ${e.namespace ? `${e.namespace}/` : ""}${e.name}`;
const lines = (plan: Plan): string[] => plan.entries.map(line);
const find = (plan: Plan, kind: string, name?: string): PlanEntry => {
  const e = plan.entries.find((x) => x.kind === kind && (name === undefined || x.name === name));
  if (!e) throw new Error(`no ${kind} in plan: ${lines(plan).join("; ")}`);
  return e;
};

describe("buildPlan", () => {
  test("a finished legacy set goes in deletion order; the snapshot ConfigMap is kept by default", () => {
    const plan = buildPlan(observation(legacySet("gpu-operator")), defaults);
    expect(lines(plan)).toEqual([
      "delete Job gpu-operator/aicr",
      "keep ConfigMap gpu-operator/aicr-snapshot",
      "delete RoleBinding gpu-operator/aicr",
      "delete ClusterRoleBinding aicr-node-reader",
      "delete Role gpu-operator/aicr",
      "delete ClusterRole aicr-node-reader",
      "delete ServiceAccount gpu-operator/aicr",
    ]);
    expect(find(plan, "ConfigMap").reason).toContain("--include-configmaps");
    expect(find(plan, "Job").reason).toContain("finished");
  });

  test("every entry keeps the uid and resourceVersion it was observed with", () => {
    const objects = legacySet("gpu-operator");
    const plan = buildPlan(observation(objects), defaults);
    for (const o of objects) {
      const e = plan.entries.find((x) => x.uid === o.uid);
      expect(e?.resourceVersion).toBe(o.resourceVersion);
    }
  });

  test("--include-configmaps deletes the snapshot ConfigMap", () => {
    const plan = buildPlan(observation([configMap("gpu-operator")]), {
      ...defaults,
      includeConfigMaps: true,
    });
    expect(lines(plan)).toEqual(["delete ConfigMap gpu-operator/aicr-snapshot"]);
  });

  test("an object carrying the run-id label is never deleted, whatever its name", () => {
    const sa = serviceAccount("gpu-operator");
    sa.labels["aicr.run/run-id"] = "20261129-101500-0123456789abcdef";
    const plan = buildPlan(observation([sa]), { force: true, includeConfigMaps: true });
    expect(find(plan, "ServiceAccount").action).toBe("keep");
    expect(find(plan, "ServiceAccount").reason).toContain(
      'aicr.run/run-id="20261129-101500-0123456789abcdef"',
    );
  });

  test("a same-named ClusterRole granting anything extra is kept, naming the extra grant", () => {
    const rules = [
      ...CLUSTER_BASELINE_RULES.map(toPolicyRule),
      { apiGroups: [""], resources: ["secrets"], verbs: ["get"] },
    ];
    const plan = buildPlan(observation([clusterRole(rules)]), defaults);
    expect(find(plan, "ClusterRole").action).toBe("keep");
    expect(find(plan, "ClusterRole").reason).toContain("get secrets (core)");
  });

  test("older 3-rule, 6-rule and discover-network ClusterRoles, split differently, all count as aicr's", () => {
    const three = CLUSTER_BASELINE_RULES.slice(0, 3).map(toPolicyRule);
    const all = [
      ...CLUSTER_BASELINE_RULES,
      ...DISCOVER_NETWORK_RULES,
      ...ORIGINAL_DISCOVER_NETWORK_RULES,
    ].map(toPolicyRule);
    const merged = [{ apiGroups: [""], resources: ["nodes", "pods"], verbs: ["get", "list"] }];
    for (const rules of [three, CLUSTER_BASELINE_RULES.map(toPolicyRule), all, merged, []]) {
      expect(find(buildPlan(observation([clusterRole(rules)]), defaults), "ClusterRole").action).toBe(
        "delete",
      );
    }
  });

  test("wildcards, resourceNames and aggregation mark a ClusterRole as someone else's", () => {
    const wildcard = clusterRole([{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]);
    const named = { ...clusterRole(), unusualRules: ["resourceNames x"] };
    const aggregated = { ...clusterRole(), aggregated: true };
    for (const o of [wildcard, named, aggregated]) {
      expect(find(buildPlan(observation([o]), defaults), "ClusterRole").action).toBe("keep");
    }
  });

  test("a ClusterRoleBinding bound to a User is kept, and so is the ClusterRole it still grants", () => {
    const crb = clusterRoleBinding([{ kind: "User", name: "alice" }]);
    const plan = buildPlan(observation([crb, clusterRole()]), defaults);
    expect(find(plan, "ClusterRoleBinding").action).toBe("keep");
    expect(find(plan, "ClusterRoleBinding").reason).toContain("User alice");
    expect(find(plan, "ClusterRole").action).toBe("keep");
    expect(find(plan, "ClusterRole").reason).toContain("ClusterRoleBinding aicr-node-reader, which is kept");
  });

  test("a ClusterRoleBinding to another role is kept; the legacy ClusterRole still goes", () => {
    const crb = clusterRoleBinding();
    crb.roleRef = { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" };
    const plan = buildPlan(observation([crb, clusterRole()]), defaults);
    expect(find(plan, "ClusterRoleBinding").reason).toContain('ClusterRole "view"');
    expect(find(plan, "ClusterRole").action).toBe("delete");
  });

  test("an active legacy Job keeps itself and what it runs with", () => {
    const objects = legacySet("gpu-operator").map((o) =>
      o.kind === "Job" ? job("gpu-operator", { active: 1, finished: false }) : o,
    );
    const plan = buildPlan(observation(objects), defaults);
    expect(toDelete(plan)).toEqual([]);
    expect(find(plan, "Job").reason).toContain("still active (1 active pod(s))");
    expect(find(plan, "ServiceAccount").reason).toContain("Job gpu-operator/aicr runs as it");
    expect(find(plan, "RoleBinding").reason).toContain("--force");
    expect(find(plan, "ClusterRoleBinding").reason).toContain("ServiceAccount gpu-operator/aicr");
    expect(find(plan, "Role").reason).toContain("which is kept");
    expect(find(plan, "ClusterRole").reason).toContain("which is kept");
  });

  test("a Job that has not finished counts as active", () => {
    const plan = buildPlan(observation([job("gpu-operator", { finished: false })]), defaults);
    expect(find(plan, "Job").reason).toContain("has not finished");
  });

  test("--force deletes the active Job and what it runs with", () => {
    const objects = legacySet("gpu-operator").map((o) =>
      o.kind === "Job" ? job("gpu-operator", { active: 1, finished: false }) : o,
    );
    const plan = buildPlan(observation(objects), { force: true, includeConfigMaps: true });
    expect(plan.entries.every((e) => e.action === "delete")).toBe(true);
    expect(find(plan, "Job").reason).toContain("--force");
  });

  test("an active Job running as another account keeps only itself", () => {
    const objects = [
      job("gpu-operator", { active: 1, serviceAccountName: "default" }),
      serviceAccount("gpu-operator"),
      roleBinding("gpu-operator"),
    ];
    const plan = buildPlan(observation(objects), defaults);
    expect(lines(plan)).toEqual([
      "keep Job gpu-operator/aicr",
      "delete RoleBinding gpu-operator/aicr",
      "delete ServiceAccount gpu-operator/aicr",
    ]);
  });

  test("an active legacy Job outside the scope keeps the cluster-scoped pair", () => {
    const obs = observation(
      [clusterRoleBinding([{ kind: "ServiceAccount", name: "aicr", namespace: "other" }]), clusterRole()],
      {
        outsideJobs: [job("other", { active: 1 })],
      },
    );
    const plan = buildPlan(obs, defaults);
    expect(find(plan, "ClusterRoleBinding").reason).toContain("Job other/aicr");
    expect(find(plan, "ClusterRole").action).toBe("keep");
  });

  test("a subject namespace whose Jobs could not be read keeps the binding unless --force", () => {
    const obs = observation(
      [clusterRoleBinding([{ kind: "ServiceAccount", name: "aicr", namespace: "locked" }])],
      {
        unverified: [{ namespace: "locked", reason: "UNAUTHORIZED: forbidden" }],
      },
    );
    expect(find(buildPlan(obs, defaults), "ClusterRoleBinding").reason).toContain(
      'namespace "locked" could not be read',
    );
    expect(find(buildPlan(obs, { ...defaults, force: true }), "ClusterRoleBinding").action).toBe("delete");
  });

  test("the validator's ClusterRoleBinding goes only when its ServiceAccount's namespace is in scope", () => {
    const inScope = buildPlan(observation([validatorBinding("gpu-operator")]), defaults);
    expect(find(inScope, "ClusterRoleBinding", "aicr-validator").action).toBe("delete");
    const outside = buildPlan(observation([validatorBinding("elsewhere")]), defaults);
    expect(find(outside, "ClusterRoleBinding", "aicr-validator").reason).toContain("--all-namespaces");
    const all = buildPlan(
      observation([validatorBinding("elsewhere")], { scope: { allNamespaces: true } }),
      defaults,
    );
    expect(find(all, "ClusterRoleBinding", "aicr-validator").action).toBe("delete");
  });

  test("the validator's ClusterRoleBinding must grant cluster-admin to aicr-validator only", () => {
    const other = validatorBinding("gpu-operator");
    other.roleRef = { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" };
    const renamed = validatorBinding("gpu-operator");
    renamed.subjects = [{ kind: "ServiceAccount", name: "ci", namespace: "gpu-operator" }];
    for (const o of [other, renamed]) {
      expect(find(buildPlan(observation([o]), defaults), "ClusterRoleBinding").action).toBe("keep");
    }
  });

  test("a Role granting more than the agent's rules is kept; its RoleBinding still goes", () => {
    const wide = role("gpu-operator", [{ apiGroups: [""], resources: ["secrets"], verbs: ["list"] }]);
    const plan = buildPlan(observation([wide, roleBinding("gpu-operator")]), defaults);
    expect(lines(plan)).toEqual(["delete RoleBinding gpu-operator/aicr", "keep Role gpu-operator/aicr"]);
  });

  test("same observation, same plan, whatever the input order", () => {
    const objects = legacySet("gpu-operator");
    const a = buildPlan(observation(objects), defaults);
    const b = buildPlan(observation([...objects].reverse()), defaults);
    expect(b).toEqual(a);
    expect(buildPlan(observation([]), defaults).entries).toEqual([]);
  });
});

import { describe, expect, test } from "bun:test";
import { requiredChecks } from "../../../src/legacy/_gate.ts";

const text = (checks: ReturnType<typeof requiredChecks>) =>
  checks.map(
    (c) => `${c.verb} ${c.resource}${c.group ? `.${c.group}` : ""} ${c.namespace ?? "*"} ${c.name ?? "*"}`,
  );

describe("requiredChecks", () => {
  test("named namespaces: get and delete of each exact name, cluster-scoped names always", () => {
    const checks = text(
      requiredChecks({ scope: { allNamespaces: false, namespaces: ["gpu"] }, includeConfigMaps: false }),
    );
    expect(checks.slice(0, 6)).toEqual([
      "get clusterrolebindings.rbac.authorization.k8s.io * aicr-node-reader",
      "delete clusterrolebindings.rbac.authorization.k8s.io * aicr-node-reader",
      "get clusterroles.rbac.authorization.k8s.io * aicr-node-reader",
      "delete clusterroles.rbac.authorization.k8s.io * aicr-node-reader",
      "get clusterrolebindings.rbac.authorization.k8s.io * aicr-validator",
      "delete clusterrolebindings.rbac.authorization.k8s.io * aicr-validator",
    ]);
    expect(checks).toContain("get jobs.batch gpu aicr");
    expect(checks).toContain("delete jobs.batch gpu aicr-validate");
    expect(checks).toContain("delete serviceaccounts gpu aicr-validator");
    expect(checks).toContain("get configmaps gpu aicr-snapshot");
    expect(checks).not.toContain("delete configmaps gpu aicr-snapshot");
  });

  test("--include-configmaps adds the ConfigMap delete; each namespace is checked", () => {
    const checks = text(
      requiredChecks({ scope: { allNamespaces: false, namespaces: ["a", "b"] }, includeConfigMaps: true }),
    );
    expect(checks).toContain("delete configmaps a aicr-snapshot");
    expect(checks).toContain("delete configmaps b aicr-snapshot");
  });

  test("--all-namespaces: a cluster-wide list per resource and cluster-wide deletes", () => {
    const checks = text(requiredChecks({ scope: { allNamespaces: true }, includeConfigMaps: false }));
    expect(checks.filter((c) => c.startsWith("list"))).toEqual([
      "list jobs.batch * *",
      "list configmaps * *",
      "list rolebindings.rbac.authorization.k8s.io * *",
      "list roles.rbac.authorization.k8s.io * *",
      "list serviceaccounts * *",
    ]);
    expect(checks).toContain("delete jobs.batch * aicr");
    expect(checks.some((c) => c.startsWith("get jobs"))).toBe(false);
  });

  test("every check is read or delete, and reads come with every scope", () => {
    for (const c of requiredChecks({ scope: { allNamespaces: true }, includeConfigMaps: true })) {
      expect(c.need).toBe(c.verb === "delete" ? "delete" : "read");
    }
  });
});

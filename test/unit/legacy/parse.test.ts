import { describe, expect, test } from "bun:test";
import { parseObserved } from "../../../src/legacy/_parse.ts";
import { thrown } from "../../support/reject.ts";

const metadata = { name: "aicr", namespace: "gpu", uid: "u1", resourceVersion: "7" };

describe("parseObserved", () => {
  test("a Job: its account, active pods and whether it finished", () => {
    const o = parseObserved("Job", {
      metadata,
      spec: { template: { spec: { serviceAccountName: "aicr" } } },
      status: { active: 1, conditions: [{ type: "Complete", status: "False" }] },
    });
    expect(o.job).toEqual({ serviceAccountName: "aicr", activePods: 1, finished: false });
    const done = parseObserved("Job", {
      metadata,
      spec: {},
      status: { conditions: [{ type: "Failed", status: "True" }] },
    });
    expect(done.job).toEqual({ serviceAccountName: "default", activePods: 0, finished: true });
  });

  test("a ClusterRole: rules, odd rules and aggregation", () => {
    const o = parseObserved("ClusterRole", {
      metadata: { ...metadata, namespace: undefined },
      rules: [
        { apiGroups: [""], resources: ["nodes"], verbs: ["get"] },
        { apiGroups: [""], resources: ["pods"], verbs: ["get"], resourceNames: ["x"] },
        { nonResourceURLs: ["/healthz"], verbs: ["get"] },
      ],
      aggregationRule: { clusterRoleSelectors: [] },
    });
    expect(o.rules?.[0]).toEqual({ apiGroups: [""], resources: ["nodes"], verbs: ["get"] });
    expect(o.unusualRules).toEqual(["resourceNames x", "nonResourceURLs /healthz"]);
    expect(o.aggregated).toBe(true);
    expect(o.namespace).toBeUndefined();
  });

  test("a binding: roleRef and subjects; labels kept", () => {
    const o = parseObserved("RoleBinding", {
      metadata: { ...metadata, labels: { a: "b" } },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "aicr" },
      subjects: [{ kind: "ServiceAccount", name: "aicr", namespace: "gpu" }],
    });
    expect(o.roleRef?.name).toBe("aicr");
    expect(o.subjects).toEqual([{ kind: "ServiceAccount", name: "aicr", namespace: "gpu" }]);
    expect(o.labels).toEqual({ a: "b" });
  });

  test("an answer without a uid is an INTERNAL error naming the object and field", () => {
    const err = thrown(() =>
      parseObserved("ServiceAccount", { metadata: { name: "aicr", resourceVersion: "1" } }),
    );
    expect(err.code).toBe("INTERNAL");
    expect(err.message).toContain('ServiceAccount "aicr"');
    expect(err.message).toContain("metadata.uid");
  });
});

import { describe, expect, test } from "bun:test";
import { grantsBeyond, LEGACY_CLUSTER_GRANTS, summarize } from "../../../src/legacy/_rule-subset.ts";

describe("grantsBeyond", () => {
  test("compares per group, resource and verb, so regrouped rules still match", () => {
    const regrouped = [
      { apiGroups: ["apps"], resources: ["daemonsets"], verbs: ["watch", "create", "delete"] },
    ];
    expect(grantsBeyond(regrouped, LEGACY_CLUSTER_GRANTS)).toEqual([]);
  });

  test("names each grant beyond the catalog once, with the core group spelled out", () => {
    const rules = [
      { apiGroups: [""], resources: ["secrets", "nodes"], verbs: ["get", "delete"] },
      { apiGroups: [""], resources: ["secrets"], verbs: ["get"] },
    ];
    expect(grantsBeyond(rules, LEGACY_CLUSTER_GRANTS)).toEqual([
      "get secrets (core)",
      "delete secrets (core)",
      "delete nodes (core)",
    ]);
  });

  test("a wildcard is never within the catalog", () => {
    expect(
      grantsBeyond([{ apiGroups: ["*"], resources: ["nodes"], verbs: ["get"] }], LEGACY_CLUSTER_GRANTS),
    ).toEqual(["get nodes (*)"]);
  });

  test("summarize shows the first few and counts the rest", () => {
    expect(summarize(["a", "b"])).toBe("a, b");
    expect(summarize(["a", "b", "c", "d", "e"])).toBe("a, b, c and 2 more");
  });
});

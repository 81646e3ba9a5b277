import { describe, expect, test } from "bun:test";
import {
  grantsBeyond,
  LEGACY_CLUSTER_GRANTS,
  ORIGINAL_DISCOVER_NETWORK_RULES,
  shortList,
} from "../../../src/legacy/_rule-subset.ts";
import { CLUSTER_BASELINE_RULES, DISCOVER_NETWORK_RULES } from "../../../src/rbac/rules.ts";

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

  test("the original's mutating --discover-network set is still recognised, though aicr no longer grants it", () => {
    const original = [...CLUSTER_BASELINE_RULES, ...ORIGINAL_DISCOVER_NETWORK_RULES];
    expect(grantsBeyond(original, LEGACY_CLUSTER_GRANTS)).toEqual([]);
    expect(
      grantsBeyond([...CLUSTER_BASELINE_RULES, ...DISCOVER_NETWORK_RULES], LEGACY_CLUSTER_GRANTS),
    ).toEqual([]);
    // The nine rules as the original granted them, eight mutating.
    expect(ORIGINAL_DISCOVER_NETWORK_RULES).toHaveLength(9);
    const texts = ORIGINAL_DISCOVER_NETWORK_RULES.map((r) => `${r.verbs.join(",")} ${r.resources.join(",")}`);
    expect(texts).toContain("create pods/exec");
    expect(texts).toContain("patch nodes");
    expect(texts).toContain("get,patch nicclusterpolicies");
    // The grant today is not within the original's discovery set alone (list nicclusterpolicies is new),
    // so the union keeps both.
    expect(grantsBeyond(DISCOVER_NETWORK_RULES, ORIGINAL_DISCOVER_NETWORK_RULES)).toEqual([
      "list nicclusterpolicies (mellanox.com)",
    ]);
  });

  test("shortList shows the first few and counts the rest", () => {
    expect(shortList(["a", "b"])).toBe("a, b");
    expect(shortList(["a", "b", "c", "d", "e"])).toBe("a, b, c and 2 more");
  });
});

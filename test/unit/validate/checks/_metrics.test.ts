import { describe, expect, test } from "bun:test";
import {
  componentNames,
  componentNamespace,
  decodeResourceList,
  metricItems,
  metricsApiEvidence,
} from "../../../../src/validate/checks/_metrics.ts";

describe("componentRefs read defensively", () => {
  test("the component's namespace, else the registry default; absent or malformed → not listed", () => {
    const refs = [{ name: "gpu-operator" }, { name: "kube-prometheus-stack", namespace: "obs" }];
    expect(componentNamespace(refs, "kube-prometheus-stack", "monitoring")).toEqual({
      listed: true,
      namespace: "obs",
    });
    expect(
      componentNamespace(
        [{ name: "kube-prometheus-stack", namespace: " " }],
        "kube-prometheus-stack",
        "monitoring",
      ),
    ).toEqual({ listed: true, namespace: "monitoring" });
    expect(
      componentNamespace(
        [{ name: "kube-prometheus-stack", namespace: 7 }],
        "kube-prometheus-stack",
        "monitoring",
      ),
    ).toEqual({ listed: true, namespace: "monitoring" });
    for (const bad of [undefined, null, "x", {}, [null, 3, "kube-prometheus-stack", { name: "other" }]])
      expect(componentNamespace(bad, "kube-prometheus-stack", "monitoring")).toEqual({ listed: false });
  });

  test("component names in order, non-strings left out", () => {
    expect(componentNames([{ name: "a" }, null, { name: 3 }, { name: "" }, { name: "b" }])).toEqual([
      "a",
      "b",
    ]);
    expect(componentNames({ name: "a" })).toEqual([]);
  });
});

describe("metrics API discovery", () => {
  test("an APIResourceList decodes; anything else says why", () => {
    expect(
      decodeResourceList({
        groupVersion: "custom.metrics.k8s.io/v1beta1",
        resources: [{ name: "pods/gpu_utilization", namespaced: true }, { name: "nodes/x" }],
      }),
    ).toEqual({
      ok: true,
      groupVersion: "custom.metrics.k8s.io/v1beta1",
      resources: [
        { name: "pods/gpu_utilization", namespaced: true },
        { name: "nodes/x", namespaced: false },
      ],
    });
    expect(decodeResourceList({ kind: "Status" })).toMatchObject({ ok: false });
    expect(decodeResourceList({ groupVersion: "g/v", resources: [{}] })).toMatchObject({ ok: false });
    expect(decodeResourceList("text")).toMatchObject({ ok: false });
  });

  test("evidence: status, groupVersion, count and the first 20 resources", () => {
    const resources = Array.from({ length: 23 }, (_, i) => ({ name: `pods/m${i}`, namespaced: true }));
    const text = metricsApiEvidence({ ok: true, groupVersion: "custom.metrics.k8s.io/v1beta1", resources });
    expect(text.split("\n").slice(0, 4)).toEqual([
      "HTTP status: 200",
      "groupVersion: custom.metrics.k8s.io/v1beta1",
      "Resources: 23",
      "  pods/m0",
    ]);
    expect(text).toContain("  pods/m19\n  ... and 3 more");
    expect(text).not.toContain("pods/m20");
    expect(metricsApiEvidence({ ok: false, status: 503, message: "HTTP 503: service unavailable" })).toBe(
      "HTTP status: 503\nError: HTTP 503: service unavailable",
    );
  });

  test("metric list items, defensively", () => {
    expect(metricItems({ items: [1, 2] })).toHaveLength(2);
    expect(metricItems({ items: null })).toEqual([]);
    expect(metricItems(undefined)).toEqual([]);
  });
});

import { describe, expect, test } from "bun:test";
import {
  customMetricPaths,
  externalEvidence,
  metricsVerdict,
  readExternal,
  sampleEvidence,
} from "../../../../src/validate/checks/pod-autoscaling.ts";

const API = { ok: true as const, groupVersion: "custom.metrics.k8s.io/v1beta1", resources: [] };

describe("pod-autoscaling metric reads", () => {
  test("each metric in gpu-operator, then dynamo-system, in the original's order", () => {
    expect(customMetricPaths()).toEqual([
      "/apis/custom.metrics.k8s.io/v1beta1/namespaces/gpu-operator/pods/*/gpu_utilization",
      "/apis/custom.metrics.k8s.io/v1beta1/namespaces/dynamo-system/pods/*/gpu_utilization",
      "/apis/custom.metrics.k8s.io/v1beta1/namespaces/gpu-operator/pods/*/gpu_memory_used",
      "/apis/custom.metrics.k8s.io/v1beta1/namespaces/dynamo-system/pods/*/gpu_memory_used",
      "/apis/custom.metrics.k8s.io/v1beta1/namespaces/gpu-operator/pods/*/gpu_power_usage",
      "/apis/custom.metrics.k8s.io/v1beta1/namespaces/dynamo-system/pods/*/gpu_power_usage",
    ]);
  });

  test("the external metric: items with a value, or no items", () => {
    expect(readExternal({ items: [{ metricName: "dcgm_gpu_power_usage", value: "250" }] })).toEqual({
      ok: true,
      items: 1,
      value: "250",
    });
    expect(readExternal({ items: [] })).toEqual({
      ok: false,
      status: 200,
      message: "the answer has no items",
    });
    expect(externalEvidence({ ok: true, items: 1, value: "250" })).toBe(
      "Path: /apis/external.metrics.k8s.io/v1beta1/namespaces/default/dcgm_gpu_power_usage\nHTTP status: 200\nItems: 1\nValue: 250",
    );
  });

  test("evidence of the custom metric sample: the path and its items, or every path tried", () => {
    expect(sampleEvidence({ found: true, path: "/p", items: 2, round: 1 })).toBe("Path: /p\nItems: 2");
    const none = sampleEvidence({ found: false, rounds: 12, lastError: "HTTP 404: not found" });
    expect(none.split("\n")).toHaveLength(8);
    expect(none).toEndWith("Last error: HTTP 404: not found");
  });

  test("verdicts: the API not served, no custom values, the external metric unreadable; else go on", () => {
    expect(
      metricsVerdict(
        { ok: false, status: 503, message: "HTTP 503: unavailable" },
        undefined,
        undefined,
        10_000,
      )?.message,
    ).toBe(
      "the custom metrics API is not served: GET /apis/custom.metrics.k8s.io/v1beta1: HTTP 503: unavailable",
    );
    expect(
      metricsVerdict(API, { found: false, rounds: 12, lastError: undefined }, undefined, 10_000)?.message,
    ).toBe(
      "no custom GPU metric (gpu_utilization, gpu_memory_used, gpu_power_usage) has values for pods in gpu-operator or dynamo-system after 12 round(s) 10s apart: prometheus-adapter serves no DCGM data",
    );
    expect(
      metricsVerdict(
        API,
        { found: true, path: "/p", items: 1, round: 1 },
        { ok: false, status: 404, message: "HTTP 404: x" },
        10_000,
      )?.message,
    ).toBe(
      "the external metric dcgm_gpu_power_usage cannot be read: GET /apis/external.metrics.k8s.io/v1beta1/namespaces/default/dcgm_gpu_power_usage: HTTP 404: x",
    );
    expect(
      metricsVerdict(
        API,
        { found: true, path: "/p", items: 1, round: 1 },
        { ok: true, items: 1, value: "1" },
        10_000,
      ),
    ).toBeUndefined();
  });
});

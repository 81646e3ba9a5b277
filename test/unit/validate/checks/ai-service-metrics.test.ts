import { describe, expect, test } from "bun:test";
import {
  aiServiceMetricsVerdict,
  prometheusService,
  queryEvidence,
  readQueryAnswer,
} from "../../../../src/validate/checks/ai-service-metrics.ts";

const URL = "http://192.0.2.2:40000/api/v1/query?query=DCGM_FI_DEV_GPU_UTIL";
const answer = (result: unknown[]) =>
  JSON.stringify({ status: "success", data: { resultType: "vector", result } });
const API = {
  ok: true as const,
  groupVersion: "custom.metrics.k8s.io/v1beta1",
  resources: [{ name: "pods/gpu_utilization", namespaced: true }],
};

describe("the Prometheus Service", () => {
  test("the first Service with a port 9090", () => {
    expect(
      prometheusService([
        { metadata: { name: "operated" }, spec: { ports: [{ port: 10901 }] } },
        { metadata: { name: "kps-prometheus" }, spec: { ports: [{ port: 8080 }, { port: 9090 }] } },
        { metadata: { name: "later" }, spec: { ports: [{ port: 9090 }] } },
      ]),
    ).toBe("kps-prometheus");
    expect(prometheusService([{ metadata: { name: "x" } }])).toBeUndefined();
  });
});

describe("a query answer", () => {
  test("series, empty, an HTTP error, bad JSON", () => {
    expect(readQueryAnswer(200, answer([{}, {}]))).toEqual({ kind: "series", status: "success", count: 2 });
    expect(readQueryAnswer(200, answer([]))).toEqual({ kind: "empty", status: "success" });
    expect(readQueryAnswer(503, answer([{}]))).toEqual({ kind: "http-error", httpStatus: 503 });
    expect(readQueryAnswer(200, "<html>")).toMatchObject({ kind: "bad-json" });
    expect(readQueryAnswer(200, JSON.stringify({ status: "success", data: {} }))).toEqual({
      kind: "bad-json",
      message: "no data.result list in the answer",
    });
  });

  test("evidence: URL, status and the number of series", () => {
    expect(queryEvidence(URL, 200, answer([{}]))).toBe(
      `URL: ${URL}\nHTTP status: 200\nStatus: success\nSeries: 1`,
    );
    expect(queryEvidence(URL, 200, answer([]))).toContain("Series: 0");
  });
});

describe("ai-service-metrics verdict", () => {
  const series = {
    kind: "answer" as const,
    url: URL,
    answer: { kind: "series" as const, status: "success", count: 3 },
  };

  test("passed: series in Prometheus and the custom metrics API served", () => {
    const v = aiServiceMetricsVerdict(series, API);
    expect(v.status).toBe("passed");
    expect(v.message).toBe(
      "Prometheus has 3 DCGM_FI_DEV_GPU_UTIL series and the custom metrics API (custom.metrics.k8s.io/v1beta1) serves 1 resource(s)",
    );
  });

  test("failed: the custom metrics API not served", () => {
    const v = aiServiceMetricsVerdict(series, {
      ok: false,
      status: 404,
      message: "HTTP 404: the server could not find the requested resource",
    });
    expect(v).toMatchObject({
      status: "failed",
      message:
        "the custom metrics API is not served: GET /apis/custom.metrics.k8s.io/v1beta1: HTTP 404: the server could not find the requested resource",
    });
  });

  test("failed: each way Prometheus falls short, with what was expected", () => {
    const msg = (p: Parameters<typeof aiServiceMetricsVerdict>[0]) =>
      aiServiceMetricsVerdict(p, undefined).message;
    expect(msg({ kind: "no-recipe" })).toStartWith("no recipe:");
    expect(msg({ kind: "no-component" })).toBe(
      "the recipe has no kube-prometheus-stack component: no Prometheus to query for DCGM metrics",
    );
    expect(msg({ kind: "no-service", namespace: "monitoring" })).toBe(
      "no Prometheus Service with port 9090 in namespace monitoring (labels tried: app.kubernetes.io/name=prometheus, then self-monitor=true)",
    );
    expect(msg({ kind: "no-endpoint", namespace: "monitoring", service: "p" })).toBe(
      "Service monitoring/p has no ready endpoint: Prometheus is not ready to answer queries",
    );
    expect(msg({ kind: "transport-error", url: URL, message: "ECONNREFUSED" })).toBe(
      `Prometheus did not answer GET ${URL}: ECONNREFUSED`,
    );
    expect(msg({ kind: "answer", url: URL, answer: { kind: "http-error", httpStatus: 500 } })).toBe(
      `Prometheus answered GET ${URL} with HTTP 500, expected 200`,
    );
    expect(msg({ kind: "answer", url: URL, answer: { kind: "bad-json", message: "Unexpected token" } })).toBe(
      `Prometheus's answer to GET ${URL} is not a query result: Unexpected token`,
    );
    expect(msg({ kind: "window-over", url: URL, queries: 13, waitedMs: 120_400, deadline: false })).toBe(
      "Prometheus has no DCGM_FI_DEV_GPU_UTIL series after 120.4s (13 queries): DCGM metrics do not reach Prometheus",
    );
    expect(msg({ kind: "window-over", url: URL, queries: 4, waitedMs: 30_000, deadline: true })).toBe(
      "the check's deadline ended while Prometheus still had no DCGM_FI_DEV_GPU_UTIL series (4 queries)",
    );
  });
});

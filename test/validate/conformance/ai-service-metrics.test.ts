/**
 * ai-service-metrics against the real control plane: Prometheus (a server in this process behind
 * monitoring/prometheus-k8s and its EndpointSlice) and the custom metrics API (an aggregated APIService
 * served from this process), as test/cluster/standins/metrics.ts stands them in.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { run } from "../../../src/validate/checks/ai-service-metrics.ts";
import type { Recipe } from "../../../src/validate/recipe.ts";
import { node } from "../../cluster/nodes.ts";
import {
  type MetricsApiStandin,
  type PrometheusStandin,
  startMetricsApi,
  startPrometheus,
} from "../../cluster/standins/metrics.ts";
import { CLUSTER_HOOK_MS } from "../../cluster/testbed.ts";
import { useCluster } from "../../support/cluster.ts";
import { checkContext } from "./_context.ts";
import { runAsIdentity } from "./_run-check.ts";
import { objectsIn, standinCluster } from "./_standin-cluster.ts";

const recipe = (componentRefs: unknown): Recipe =>
  ({ kind: "RecipeMetadata", spec: { constraints: [], componentRefs } }) as Recipe;
const WITH_PROMETHEUS = recipe([
  { name: "gpu-operator", namespace: "gpu-operator" },
  { name: "kube-prometheus-stack", namespace: "monitoring" },
]);
const LEFT_KINDS = [
  { apiVersion: "v1", kind: "Pod" },
  { apiVersion: "v1", kind: "ConfigMap" },
  { apiVersion: "v1", kind: "Service" },
];

describe("[real] ai-service-metrics", () => {
  let prom: PrometheusStandin;
  let api: MetricsApiStandin;
  // Registered before the cluster's hooks: the stand-ins stop while the cluster is still up.
  afterAll(async () => {
    await prom?.stop();
    await api?.stop();
  }, CLUSTER_HOOK_MS);
  const cluster = useCluster("real", { start: () => standinCluster([node("gpu-node-1", { gpus: 8 })]) });
  beforeAll(async () => {
    prom = await startPrometheus(cluster());
    api = await startMetricsApi(cluster());
  }, CLUSTER_HOOK_MS);

  const leftIn = async (ns: string) =>
    (await objectsIn(cluster(), ns, LEFT_KINDS)).filter((o) => o !== "ConfigMap/kube-root-ca.crt");

  test("passes: Prometheus has DCGM series, the custom metrics API is served (as the check's own identity)", async () => {
    prom.mode = "ok";
    const ctx = await checkContext(cluster(), "ai-service-metrics", { recipe: WITH_PROMETHEUS });
    const { verdict: v, writes } = await runAsIdentity(cluster(), "ai-service-metrics", ctx, run);
    expect(v.status).toBe("passed");
    expect(v.message).toContain("Prometheus has 2 DCGM_FI_DEV_GPU_UTIL series");
    expect(v.message).toContain("custom.metrics.k8s.io/v1beta1");
    expect(ctx.blocks.map((b) => b.label)).toEqual([
      "Prometheus Query: DCGM_FI_DEV_GPU_UTIL",
      "Prometheus query response (GPU util)",
      "Custom Metrics API",
    ]);
    expect(ctx.blocks[0]?.data).toContain("Series: 2");
    expect(JSON.parse(ctx.blocks[1]?.data ?? "").data.result).toHaveLength(2);
    expect(ctx.blocks[2]?.data).toContain("pods/gpu_utilization");
    expect(await leftIn(ctx.testNamespace)).toEqual([]);
    expect(writes).toEqual([]);
  });

  test("fails when Prometheus has no DCGM series for the whole window (waits scaled)", async () => {
    prom.mode = "empty";
    const before = prom.queries;
    const ctx = await checkContext(cluster(), "ai-service-metrics", {
      recipe: WITH_PROMETHEUS,
      waitScale: 0.02,
    });
    const v = await run(ctx);
    expect(v.status).toBe("failed");
    expect(v.message).toMatch(/^Prometheus has no DCGM_FI_DEV_GPU_UTIL series after [\d.]+s \(\d+ queries\)/);
    // 2.4 s window, a query every 0.2 s: it kept asking.
    expect(prom.queries - before).toBeGreaterThan(3);
    expect(ctx.blocks[0]?.data).toContain("Series: 0");
    expect(ctx.blocks.map((b) => b.label)).not.toContain("Custom Metrics API");
  });

  test("fails at once when Prometheus answers 500", async () => {
    prom.mode = "error";
    const before = prom.queries;
    const ctx = await checkContext(cluster(), "ai-service-metrics", { recipe: WITH_PROMETHEUS });
    const v = await run(ctx);
    expect(v.status).toBe("failed");
    expect(v.message).toMatch(
      /^Prometheus answered GET http:\/\/[\d.]+:\d+\/api\/v1\/query\?query=DCGM_FI_DEV_GPU_UTIL with HTTP 500, expected 200$/,
    );
    expect(prom.queries - before).toBe(1);
  });

  test("fails without the kube-prometheus-stack component, or without a recipe", async () => {
    const ctx = await checkContext(cluster(), "ai-service-metrics", {
      recipe: recipe([{ name: "gpu-operator" }]),
      createNamespace: false,
    });
    expect((await run(ctx)).message).toBe(
      "the recipe has no kube-prometheus-stack component: no Prometheus to query for DCGM metrics",
    );
    const none = await checkContext(cluster(), "ai-service-metrics", { createNamespace: false });
    const v = await run(none);
    expect(v.status).toBe("failed");
    expect(v.message).toStartWith("no recipe:");
  });

  test("fails when the namespace has no Prometheus Service", async () => {
    prom.mode = "ok";
    const ctx = await checkContext(cluster(), "ai-service-metrics", {
      recipe: recipe([{ name: "kube-prometheus-stack", namespace: "observability" }]),
      createNamespace: false,
    });
    const v = await run(ctx);
    expect(v.message).toBe(
      "no Prometheus Service with port 9090 in namespace observability (labels tried: app.kubernetes.io/name=prometheus, then self-monitor=true)",
    );
  });

  test("fails when the custom metrics API is not served", async () => {
    prom.mode = "ok";
    await api.stop();
    const ctx = await checkContext(cluster(), "ai-service-metrics", { recipe: WITH_PROMETHEUS });
    const v = await run(ctx);
    expect(v.status).toBe("failed");
    expect(v.message).toMatch(
      /^the custom metrics API is not served: GET \/apis\/custom\.metrics\.k8s\.io\/v1beta1: HTTP 404: /,
    );
    expect(ctx.blocks.at(-1)?.label).toBe("Custom Metrics API");
    expect(ctx.blocks.at(-1)?.data).toContain("HTTP status: 404");
  });
});

/**
 * pod-autoscaling against the real control plane: the DCGM exporter's pods (the GPU Operator stand-in's
 * DaemonSet), the custom and external metrics APIs served from this process
 * (test/cluster/standins/metrics.ts), and the real HPA controller
 * (kube-controller-manager, 5 s loop) scaling the check's Deployment — whose pods run dist/aicr
 * `probe sleep` in the process kubelet — up and back down.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { run } from "../../../src/validate/checks/pod-autoscaling.ts";
import type { Recipe } from "../../../src/validate/recipe.ts";
import { node } from "../../cluster/nodes.ts";
import { installDcgmExporter } from "../../cluster/standins/gpu-operator.ts";
import { type MetricsApiStandin, startMetricsApi } from "../../cluster/standins/metrics.ts";
import { CLUSTER_HOOK_MS } from "../../cluster/testbed.ts";
import { useCluster } from "../../support/cluster.ts";
import { checkContext } from "./_context.ts";
import { runAsIdentity } from "./_run-check.ts";
import { AUTOSCALING_KINDS, objectsIn, standinCluster, untilNothingIn } from "./_standin-cluster.ts";

const RECIPE = { kind: "RecipeMetadata", spec: { constraints: [] } } as unknown as Recipe;

/**
 * Reading an external metric is `list` to the authorizer (the path names no object), which the
 * catalog's pod-autoscaling rules lack (get only): asked of _catalog.ts; harmless once it is there.
 */
const EXTERNAL_METRICS_LIST = [{ apiGroups: ["external.metrics.k8s.io"], resources: ["*"], verbs: ["list"] }];

describe("[real] pod-autoscaling", () => {
  let api: MetricsApiStandin | undefined;
  let removeExporter: (() => Promise<void>) | undefined;
  // Registered before the cluster's hooks: the stand-ins stop while the cluster is still up.
  afterAll(async () => {
    await removeExporter?.();
    await api?.stop();
  }, CLUSTER_HOOK_MS);
  const cluster = useCluster("real", {
    start: () => standinCluster([node("gpu-node-1", { gpus: 8 }), node("cpu-node-1")]),
  });
  const metrics = () => {
    if (!api) throw new Error("the metrics API stand-in did not start");
    return api;
  };
  beforeAll(async () => {
    api = await startMetricsApi(cluster());
  }, CLUSTER_HOOK_MS);

  /** Nothing the check made is left in its namespace (its pods end a moment after their Deployment). */
  const nothingLeft = (ns: string) => untilNothingIn(cluster(), ns, AUTOSCALING_KINDS);

  test("skips without a DCGM exporter pod", async () => {
    const ctx = await checkContext(cluster(), "pod-autoscaling", { recipe: RECIPE, createNamespace: false });
    const v = await run(ctx);
    expect(v).toMatchObject({
      status: "skipped",
      message:
        "no DCGM exporter pod (label app=nvidia-dcgm-exporter) in any namespace: no GPU metrics to autoscale on",
    });
    expect(ctx.blocks).toEqual([]);
  });

  test("passes: the HPA scales the Deployment up on the GPU power metric and back down (as the check's own identity)", async () => {
    removeExporter = await installDcgmExporter(cluster());
    metrics().custom = "ok";
    metrics().powerUsage = "250";
    const ctx = await checkContext(cluster(), "pod-autoscaling", { recipe: RECIPE, waitScale: 0.3 });
    const { verdict: v } = await runAsIdentity(cluster(), "pod-autoscaling", ctx, run, {
      extraClusterRules: EXTERNAL_METRICS_LIST,
    });
    expect(v.message).toMatch(
      /^HPA hpa-test-\S+ scaled its Deployment from 1 to [23] replicas on dcgm_gpu_power_usage and back to [01] once its target was raised$/,
    );
    expect(v.status).toBe("passed");
    expect(ctx.blocks.map((b) => b.label)).toEqual([
      "Custom Metrics API",
      "Custom metric sample",
      "External Metrics API",
      "Apply test manifest",
      "HPA Behavioral Test",
      "Delete test namespace",
    ]);
    expect(ctx.blocks[1]?.data).toBe(
      "Path: /apis/custom.metrics.k8s.io/v1beta1/namespaces/gpu-operator/pods/*/gpu_utilization\nItems: 1",
    );
    expect(ctx.blocks[2]?.data).toContain("Value: 250");
    expect(ctx.blocks[3]?.data).toContain("image: ghcr.io/nvidia/aicr:validate-test");
    expect(ctx.blocks[5]?.data).toStartWith(
      `HorizontalPodAutoscaler/${ctx.name("hpa-test")}, Deployment/${ctx.name("hpa-test")} deleted`,
    );
    // The HPA controller read the external metric in the check's namespace, through the aggregator.
    expect(metrics().requests).toContain(
      `/apis/external.metrics.k8s.io/v1beta1/namespaces/${ctx.testNamespace}/dcgm_gpu_power_usage`,
    );
    await nothingLeft(ctx.testNamespace);
  }, 150_000);

  test("fails when the GPU power stays under the target: the HPA never asks for more (waits scaled)", async () => {
    metrics().powerUsage = "0";
    const ctx = await checkContext(cluster(), "pod-autoscaling", { recipe: RECIPE, waitScale: 0.1 });
    const v = await run(ctx);
    expect(v.status).toBe("failed");
    expect(v.message).toMatch(
      new RegExp(
        `^HPA ${ctx.testNamespace}/hpa-test-\\S+ did not ask for more than 1 replica within 18s \\(dcgm_gpu_power_usage against a target average of 10\\): desiredReplicas [01], currentReplicas [01]`,
      ),
    );
    expect(ctx.blocks.at(-1)?.label).toBe("Delete test namespace");
    await nothingLeft(ctx.testNamespace);
  }, 90_000);

  test("fails when no custom GPU metric has values", async () => {
    metrics().custom = "empty";
    const ctx = await checkContext(cluster(), "pod-autoscaling", { recipe: RECIPE, waitScale: 0.01 });
    const v = await run(ctx);
    expect(v.message).toBe(
      "no custom GPU metric (gpu_utilization, gpu_memory_used, gpu_power_usage) has values for pods in gpu-operator or dynamo-system after 12 round(s) 0.1s apart: prometheus-adapter serves no DCGM data",
    );
    expect(ctx.blocks.map((b) => b.label)).toEqual(["Custom Metrics API", "Custom metric sample"]);
    metrics().custom = "ok";
  });

  test("fails when the external metric is not served", async () => {
    metrics().powerUsage = undefined;
    const ctx = await checkContext(cluster(), "pod-autoscaling", { recipe: RECIPE });
    const v = await run(ctx);
    expect(v.status).toBe("failed");
    expect(v.message).toMatch(
      /^the external metric dcgm_gpu_power_usage cannot be read: GET \/apis\/external\.metrics\.k8s\.io\/v1beta1\/namespaces\/default\/dcgm_gpu_power_usage: HTTP 404: /,
    );
    expect(ctx.blocks.at(-1)?.data).toContain("HTTP status: 404");
    expect(await objectsIn(cluster(), ctx.testNamespace, AUTOSCALING_KINDS)).toEqual([]);
  });
});

/**
 * cluster-autoscaling against the real control plane: no Karpenter and nodes without a providerID
 * (skip); the Karpenter stand-in (test/cluster/standins/autoscaler.ts) whose provisioner registers a
 * new process-kubelet Node for the GPU pool when the check's one-GPU pods are unschedulable (pass) or
 * does nothing (fail). The HPA reads the external metric from the stand-in metrics API; the real HPA
 * controller and kube-scheduler do the rest; the pods run dist/aicr `probe sleep` on the new node.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { run } from "../../../src/validate/checks/cluster-autoscaling.ts";
import type { Recipe } from "../../../src/validate/recipe.ts";
import { node } from "../../cluster/nodes.ts";
import { adminClient } from "../../cluster/standins/_host.ts";
import { standinDeployment } from "../../cluster/standins/_standin-api.ts";
import { installKarpenter, type KarpenterStandin } from "../../cluster/standins/autoscaler.ts";
import { type MetricsApiStandin, startMetricsApi } from "../../cluster/standins/metrics.ts";
import { CLUSTER_HOOK_MS } from "../../cluster/testbed.ts";
import { useCluster } from "../../support/cluster.ts";
import { checkContext } from "./_context.ts";
import { runAsIdentity } from "./_run-check.ts";
import { AUTOSCALING_KINDS, standinCluster, untilNothingIn } from "./_standin-cluster.ts";

const RECIPE = { kind: "RecipeMetadata", spec: { constraints: [] } } as unknown as Recipe;

describe("[real] cluster-autoscaling", () => {
  let api: MetricsApiStandin | undefined;
  let karpenter: KarpenterStandin | undefined;
  // Registered before the cluster's hooks: the stand-ins stop while the cluster is still up.
  afterAll(async () => {
    await karpenter?.stop();
    await api?.stop();
  }, CLUSTER_HOOK_MS);
  const cluster = useCluster("real", {
    start: () => standinCluster([node("gpu-node-1", { gpus: 8 }), node("cpu-node-1")]),
  });
  beforeAll(async () => {
    api = await startMetricsApi(cluster());
  }, CLUSTER_HOOK_MS);
  const standin = () => {
    if (!karpenter) throw new Error("the Karpenter stand-in is not installed");
    return karpenter;
  };
  const nothingLeft = (ns: string) => untilNothingIn(cluster(), ns, AUTOSCALING_KINDS);

  test("skips without Karpenter on nodes that name no cloud provider", async () => {
    const ctx = await checkContext(cluster(), "cluster-autoscaling", {
      recipe: RECIPE,
      createNamespace: false,
    });
    const v = await run(ctx);
    expect(v).toMatchObject({
      status: "skipped",
      message:
        "no Karpenter, and the first node's providerID (none) is neither aws:// (EKS) nor gce:// (GKE): no cluster autoscaler to test",
    });
    expect(ctx.blocks.map((b) => b.label)).toEqual(["Platform"]);
  });

  test("passes: the GPU pool gains a node for the pending pods, which then run (as the check's own identity)", async () => {
    karpenter = await installKarpenter(cluster(), {
      pools: [{ name: "cpu-pool", gpu: false }, { name: "gpu-pool" }],
    });
    const ctx = await checkContext(cluster(), "cluster-autoscaling", { recipe: RECIPE, waitScale: 0.3 });
    const { verdict: v } = await runAsIdentity(cluster(), "cluster-autoscaling", ctx, run);
    expect(v.message).toMatch(
      /^Karpenter added GPU capacity on demand: NodePool gpu-pool grew from 0 to 1 node\(s\) and [2-4] one-GPU test pods run$/,
    );
    expect(v.status).toBe("passed");
    expect(standin().added).toEqual(["gpu-pool-001"]);
    expect(ctx.blocks.map((b) => b.label)).toEqual([
      "Karpenter",
      "Karpenter NodePools",
      "GPU nodes",
      "Cluster autoscaling test",
    ]);
    expect(ctx.blocks[1]?.data).toContain('gpu-pool: limits {"cpu":"256","nvidia.com/gpu":"16"} (GPU)');
    expect(ctx.blocks[3]?.data).toContain(`deleted HorizontalPodAutoscaler/${ctx.name("cluster-auto-test")}`);
    await nothingLeft(ctx.testNamespace);
  }, 150_000);

  test("fails when the autoscaler adds no node (waits scaled)", async () => {
    standin().broken = true;
    // The pool's node from the passing test is cordoned: nothing for the pods but a new node.
    await cordon("gpu-pool-001");
    const ctx = await checkContext(cluster(), "cluster-autoscaling", { recipe: RECIPE, waitScale: 0.15 });
    const v = await run(ctx);
    expect(v.status).toBe("failed");
    expect(v.message).toMatch(
      /^NodePool gpu-pool: no new node labelled karpenter\.sh\/nodepool=gpu-pool within 27s \(1, baseline 1\): the autoscaler did not add GPU capacity for the pending pods; pod cluster-auto-test-\S+: Pending \(Unschedulable: /,
    );
    expect(standin().added).toEqual(["gpu-pool-001"]);
    await nothingLeft(ctx.testNamespace);
  }, 120_000);

  async function cordon(name: string) {
    const admin = adminClient(cluster());
    await admin.mergePatch({ apiVersion: "v1", kind: "Node", name }, { spec: { unschedulable: true } });
    admin.close();
  }
});

describe("[real] cluster-autoscaling on EKS without Karpenter", () => {
  const eksNode = (name: string, labels: Record<string, string>, gpus?: number) => {
    const n = node(name, { ...(gpus ? { gpus } : {}), labels });
    return { ...n, spec: { ...n.spec, providerID: `aws:///us-west-2a/i-0${name.replace(/\W/g, "")}` } };
  };
  const cluster = useCluster("real", {
    start: () =>
      standinCluster([
        eksNode("ip-10-0-1-1", { "topology.kubernetes.io/region": "us-west-2" }),
        eksNode(
          "ip-10-0-2-1",
          { "eks.amazonaws.com/nodegroup": "gpu-ng", "topology.kubernetes.io/region": "us-west-2" },
          8,
        ),
      ]),
  });

  test("passes with GPU nodes in a node group and the Cluster Autoscaler available (as the check's own identity)", async () => {
    const admin = adminClient(cluster());
    await standinDeployment(admin, {
      namespace: "kube-system",
      name: "cluster-autoscaler",
      labels: { "app.kubernetes.io/name": "aws-cluster-autoscaler" },
      image: "registry.k8s.io/autoscaling/cluster-autoscaler:v1.32.0",
    });
    admin.close();
    const ctx = await checkContext(cluster(), "cluster-autoscaling", { recipe: RECIPE });
    const { verdict: v } = await runAsIdentity(cluster(), "cluster-autoscaling", ctx, run);
    expect(v).toMatchObject({
      status: "passed",
      message:
        "EKS: 1 GPU node(s) in node group gpu-ng (us-west-2), Cluster Autoscaler kube-system/cluster-autoscaler available",
    });
    expect(ctx.blocks.map((b) => b.label)).toEqual(["Platform", "GPU nodes", "Cluster Autoscaler"]);
    expect(ctx.blocks[0]?.data).toContain("providerID of the first node: aws:///us-west-2a/i-0ip10011");
  });
});

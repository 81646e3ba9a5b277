import { describe, expect, test } from "bun:test";
import {
  eksNodeGroup,
  fallbackVerdict,
  gpuPools,
  karpenterReady,
  type NodeLike,
  parseGceProviderId,
  pendingReasons,
  platformOf,
  podsRunning,
} from "../../../../src/validate/checks/cluster-autoscaling.ts";

const awsNode = (name: string, labels: Record<string, string> = {}): NodeLike => ({
  metadata: { name, labels: { "nvidia.com/gpu.present": "true", ...labels } },
  spec: { providerID: `aws:///us-west-2a/i-0${name}` },
});

describe("Karpenter", () => {
  test("available: replicas (default 1) above 0, all available", () => {
    const d = (replicas: number | undefined, available: number) => ({
      metadata: { namespace: "karpenter", name: "karpenter" },
      spec: replicas === undefined ? {} : { replicas },
      status: { availableReplicas: available },
    });
    expect(karpenterReady(d(undefined, 1))).toBeUndefined();
    expect(karpenterReady(d(2, 2))).toBeUndefined();
    expect(karpenterReady(d(2, 1))).toBe(
      "Karpenter Deployment karpenter/karpenter is not available: 1 of 2 replica(s) available",
    );
    expect(karpenterReady(d(0, 0))).toBe("Karpenter Deployment karpenter/karpenter is scaled to 0 replicas");
  });

  test("GPU pools: those whose limits name nvidia.com/gpu, in list order", () => {
    expect(
      gpuPools([
        { metadata: { name: "cpu" }, spec: { limits: { cpu: "64" } } },
        { metadata: { name: "h100" }, spec: { limits: { "nvidia.com/gpu": "16" } } },
        { metadata: { name: "none" }, spec: {} },
        { metadata: { name: "a100" }, spec: { limits: { cpu: "1", "nvidia.com/gpu": 8 } } },
      ]),
    ).toEqual(["h100", "a100"]);
  });

  test("pods counted Running or Succeeded; why the others wait", () => {
    const pods = [
      { metadata: { name: "a" }, status: { phase: "Running" } },
      { metadata: { name: "b" }, status: { phase: "Succeeded" } },
      {
        metadata: { name: "c" },
        status: {
          phase: "Pending",
          conditions: [
            { type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/2 nodes" },
          ],
        },
      },
    ];
    expect(podsRunning(pods)).toBe(2);
    expect(pendingReasons(pods)).toEqual(["pod c: Pending (Unschedulable: 0/2 nodes)"]);
  });
});

describe("the platform fallback (no Karpenter)", () => {
  test("platform by the first node's providerID", () => {
    expect(platformOf("aws:///us-west-2a/i-0abc")).toBe("eks");
    expect(platformOf("gce://proj/us-central1-a/gke-n-1")).toBe("gke");
    expect(platformOf("azure:///subscriptions/x")).toBe("other");
    expect(platformOf(undefined)).toBe("other");
  });

  test("skips on any other platform, naming the providerID", () => {
    expect(fallbackVerdict({ providerID: "kind://docker/kind/kind-worker", gpuNodes: [] })).toMatchObject({
      status: "skipped",
      message:
        "no Karpenter, and the first node's providerID (kind://docker/kind/kind-worker) is neither aws:// (EKS) nor gce:// (GKE): no cluster autoscaler to test",
    });
  });

  test("EKS: GPU nodes in a node group pass, with or without a Cluster Autoscaler", () => {
    const nodes = [
      awsNode("gpu-a", {
        "eks.amazonaws.com/nodegroup": "gpu-ng",
        "topology.kubernetes.io/region": "us-west-2",
      }),
      awsNode("gpu-b", { nodeGroup: "legacy" }),
    ];
    expect(eksNodeGroup(nodes)).toBe("gpu-ng");
    expect(eksNodeGroup([awsNode("x", { nodeGroup: "legacy" })])).toBe("legacy");
    const v = fallbackVerdict({ providerID: "aws:///us-west-2a/i-0a", gpuNodes: nodes });
    expect(v.status).toBe("passed");
    expect(v.message).toBe(
      "EKS: 2 GPU node(s) in node group gpu-ng (us-west-2), no Cluster Autoscaler Deployment found (node-group scaling assumed)",
    );
    const withCa = fallbackVerdict({
      providerID: "aws:///us-west-2a/i-0a",
      gpuNodes: nodes,
      autoscaler: "kube-system/cluster-autoscaler",
    });
    expect(withCa.message).toBe(
      "EKS: 2 GPU node(s) in node group gpu-ng (us-west-2), Cluster Autoscaler kube-system/cluster-autoscaler available",
    );
    expect(withCa.details).toContain("Cluster Autoscaler: kube-system/cluster-autoscaler");
  });

  test("EKS: a Cluster Autoscaler alone passes; neither node group nor autoscaler fails; no GPU node fails", () => {
    const bare = [awsNode("gpu-a")];
    expect(
      fallbackVerdict({
        providerID: "aws:///z/i",
        gpuNodes: bare,
        autoscaler: "cluster-autoscaler/cluster-autoscaler-aws-cluster-autoscaler",
      }).status,
    ).toBe("passed");
    const v = fallbackVerdict({ providerID: "aws:///z/i", gpuNodes: bare });
    expect(v).toMatchObject({
      status: "failed",
      message:
        "EKS: the GPU nodes belong to no node group (label eks.amazonaws.com/nodegroup or nodeGroup) and no Cluster Autoscaler Deployment is available (cluster-autoscaler or cluster-autoscaler-aws-cluster-autoscaler in kube-system, cluster-autoscaler, system)",
    });
    expect(fallbackVerdict({ providerID: "aws:///z/i", gpuNodes: [] })).toMatchObject({
      status: "failed",
      message: "EKS: no GPU node (label nvidia.com/gpu.present=true): no GPU capacity to autoscale",
    });
  });

  test("GKE: passes whenever GPU nodes exist, partly confirmed without the status ConfigMap", () => {
    const n: NodeLike = {
      metadata: {
        name: "gke-gpu-1",
        labels: { "nvidia.com/gpu.present": "true", "cloud.google.com/gke-nodepool": "gpu-pool" },
        annotations: { "cluster-autoscaler.kubernetes.io/scale-down-disabled": "true" },
      },
      spec: { providerID: "gce://my-proj/us-central1-a/gke-gpu-1" },
    };
    expect(parseGceProviderId("gce://my-proj/us-central1-a/gke-gpu-1")).toEqual({
      project: "my-proj",
      zone: "us-central1-a",
      instance: "gke-gpu-1",
    });
    expect(parseGceProviderId("gce://x")).toBeUndefined();
    const partial = fallbackVerdict({
      providerID: "gce://my-proj/us-central1-a/gke-gpu-1",
      gpuNodes: [n],
      events: [],
    });
    expect(partial.message).toBe(
      "GKE: 1 GPU node(s) in node pool(s) gpu-pool; the cluster-autoscaler-status ConfigMap was not found, so the autoscaler is only partly confirmed",
    );
    expect(partial.details[0]).toBe(
      "node gke-gpu-1: pool gpu-pool, project my-proj, zone us-central1-a, scale-down-disabled true",
    );
    const full = fallbackVerdict({
      providerID: "gce://p/z/i",
      gpuNodes: [n],
      status: { where: "kube-system/cluster-autoscaler-status", text: "Cluster-wide: Health: Healthy" },
      events: ["2026-12-01T00:00:00Z TriggeredScaleUp Pod/x: pod triggered scale-up"],
    });
    expect(full).toMatchObject({
      status: "passed",
      message:
        "GKE: 1 GPU node(s) in node pool(s) gpu-pool; cluster autoscaler status in kube-system/cluster-autoscaler-status",
    });
    expect(full.details.at(-1)).toBe(
      "event: 2026-12-01T00:00:00Z TriggeredScaleUp Pod/x: pod triggered scale-up",
    );
    expect(fallbackVerdict({ providerID: "gce://p/z/i", gpuNodes: [] }).status).toBe("failed");
  });
});

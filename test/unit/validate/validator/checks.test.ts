import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseSnapshot } from "../../../../src/snapshot/schema.ts";
import {
  expectedResources,
  gpuOperatorVersion,
  imageReferenceTag,
  operatorHealth,
} from "../../../../src/validate/validator/_checks.ts";

const snapshot = parseSnapshot(
  readFileSync(join(import.meta.dir, "../../../validate/fixtures/snapshot-h100.yaml"), "utf8"),
  "fixture",
);
const policy = (state?: string) => ({ metadata: { name: "cluster-policy" }, status: state ? { state } : {} });
const pod = (name: string, phase: string, image = "x:1", labels: Record<string, string> = {}) => ({
  metadata: { name, labels },
  spec: { containers: [{ name: "main", image }] },
  status: { phase },
});
const gpuNode = (name: string, gpus: string) => ({
  metadata: { name, labels: { "nvidia.com/gpu.present": "true" } },
  status: { allocatable: { "nvidia.com/gpu": gpus }, capacity: { "nvidia.com/gpu": "8" } },
});
const cpuNode = { metadata: { name: "cpu-1", labels: {} }, status: { allocatable: { cpu: "16" } } };

describe("operator-health", () => {
  test("passed: ClusterPolicy ready, every operand Running or Succeeded", () => {
    const v = operatorHealth([policy("ready")], [pod("a", "Running"), pod("b", "Succeeded")]);
    expect([v.status, v.message]).toEqual(["passed", "ClusterPolicy ready; 2 operand pod(s) Running"]);
  });

  test("failed: no policy, a policy not ready, no operands, an operand not Running", () => {
    expect(operatorHealth([], []).message).toBe("no ClusterPolicy found: the GPU Operator is not installed");
    expect(operatorHealth([policy()], [pod("a", "Running")]).message).toBe(
      "ClusterPolicy not ready: cluster-policy (no state)",
    );
    expect(operatorHealth([policy("ready")], []).message).toBe("no operand pods in namespace gpu-operator");
    const v = operatorHealth(
      [policy("ready")],
      [pod("a", "Running"), pod("drv", "Failed"), pod("p", "Pending")],
    );
    expect([v.status, v.message]).toEqual([
      "failed",
      "2 operand pod(s) not Running: drv (Failed), p (Pending)",
    ]);
  });
});

describe("expected-resources", () => {
  test("passed: every GPU node has allocatable GPUs; the snapshot's node matches its count", () => {
    const v = expectedResources([gpuNode("gpu-node-1", "8"), gpuNode("gpu-node-2", "4"), cpuNode], snapshot);
    expect(v.status).toBe("passed");
    expect(v.details).toEqual([
      "node gpu-node-1: allocatable nvidia.com/gpu=8",
      "node gpu-node-2: allocatable nvidia.com/gpu=4",
    ]);
  });

  test("failed: a GPU node with none allocatable, or fewer than the snapshot found", () => {
    expect(expectedResources([gpuNode("gpu-node-2", "0")], snapshot).message).toBe(
      "GPU node(s) advertise no allocatable nvidia.com/gpu: gpu-node-2",
    );
    expect(expectedResources([gpuNode("gpu-node-1", "7")], snapshot).message).toBe(
      "node gpu-node-1 advertises 7 allocatable nvidia.com/gpu, but the snapshot found 8 GPU(s) on it",
    );
    expect(expectedResources([cpuNode], snapshot).message).toBe(
      "the snapshot found 8 GPU(s) on gpu-node-1, but no node advertises nvidia.com/gpu",
    );
  });

  test("skipped: no GPU nodes and none in the snapshot", () => {
    const noGpu = { ...snapshot, measurements: snapshot.measurements.filter((m) => m.type !== "GPU") };
    expect(expectedResources([cpuNode], noGpu).status).toBe("skipped");
  });
});

describe("gpu-operator-version", () => {
  const operator = pod("gpu-operator-1", "Running", "nvcr.io/nvidia/gpu-operator:v25.10.1", {
    app: "gpu-operator",
  });

  test("passed / failed against the phase constraint; skipped without one", () => {
    expect(gpuOperatorVersion(">= v24.6.0", [operator]).status).toBe("passed");
    expect(gpuOperatorVersion(">= v26", [operator])).toMatchObject({
      status: "failed",
      message: "deployed GPU Operator v25.10.1; Deployment.gpu-operator.version expects >= v26",
    });
    expect(gpuOperatorVersion(undefined, [operator]).status).toBe("skipped");
  });

  test("failed when no operator pod or no tag is found", () => {
    expect(gpuOperatorVersion(">= 1", [pod("x", "Running")]).message).toContain("no GPU Operator pod");
    expect(
      gpuOperatorVersion(">= 1", [pod("o", "Running", "gpu-operator@sha256:ab", { app: "gpu-operator" })])
        .message,
    ).toContain("carries no version tag");
  });

  test("imageReferenceTag: registry ports and digests are not tags", () => {
    expect(imageReferenceTag("registry:5000/nvidia/gpu-operator:v1.2")).toBe("v1.2");
    expect(imageReferenceTag("registry:5000/nvidia/gpu-operator")).toBeUndefined();
    expect(imageReferenceTag("gpu-operator:v1@sha256:abc")).toBe("v1");
  });
});

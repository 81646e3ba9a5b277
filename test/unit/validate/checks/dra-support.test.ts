import { describe, expect, test } from "bun:test";
import type { Pod } from "../../../../src/validate/checks/_dra.ts";
import {
  claimPodVerdict,
  type DraFacts,
  draPrerequisites,
} from "../../../../src/validate/checks/dra-support.ts";

const API = [{ name: "resourceclaims", kind: "ResourceClaim", namespaced: true }];
const HEALTHY: DraFacts = {
  v1: API,
  v1beta1: undefined,
  pods: [{ name: "nvidia-dra-driver-gpu-controller-abc", phase: "Running" }],
  controller: { spec: { replicas: 1 }, status: { availableReplicas: 1 } },
  plugin: { status: { desiredNumberScheduled: 2, numberReady: 2 } },
  slices: [{ metadata: { name: "s" }, spec: { driver: "gpu.nvidia.com", devices: [{ name: "gpu-0" }] } }],
};

describe("draPrerequisites", () => {
  test("all healthy: go on to the claim test", () => {
    expect(draPrerequisites(HEALTHY)).toBeUndefined();
  });

  test("no DRA API at all: skipped", () => {
    const r = draPrerequisites({ ...HEALTHY, v1: undefined, v1beta1: undefined });
    expect(r?.stage).toBe("api");
    expect(r?.verdict.status).toBe("skipped");
    expect(r?.verdict.message).toContain("neither resource.k8s.io/v1 nor resource.k8s.io/v1beta1");
  });

  test("no driver (no pods, no controller): skipped, whatever the rest", () => {
    for (const pods of [[], { error: "forbidden" }] as DraFacts["pods"][]) {
      const r = draPrerequisites({ ...HEALTHY, pods, controller: undefined, plugin: undefined, slices: [] });
      expect(r?.verdict.status).toBe("skipped");
      expect(r?.verdict.message).toBe(
        "the NVIDIA DRA driver is not installed: no pods in namespace nvidia-dra-driver and no Deployment nvidia-dra-driver/nvidia-dra-driver-gpu-controller",
      );
    }
  });

  test("only v1beta1 served, the driver there: failed, v1 needed", () => {
    const r = draPrerequisites({ ...HEALTHY, v1: undefined, v1beta1: API });
    expect(r?.stage).toBe("api");
    expect(r?.verdict.status).toBe("failed");
    expect(r?.verdict.message).toContain("resource.k8s.io/v1 is not served (only resource.k8s.io/v1beta1)");
  });

  test("pods not listable but the controller there: failed at the pods", () => {
    const r = draPrerequisites({ ...HEALTHY, pods: { error: "pods is forbidden" } });
    expect(r?.stage).toBe("pods");
    expect(r?.verdict).toMatchObject({
      status: "failed",
      message: "the pods in namespace nvidia-dra-driver cannot be listed: pods is forbidden",
    });
  });

  test("pods there, no controller: failed; controller unavailable: failed with its count", () => {
    expect(draPrerequisites({ ...HEALTHY, controller: undefined })?.verdict).toMatchObject({
      status: "failed",
      message: "Deployment nvidia-dra-driver/nvidia-dra-driver-gpu-controller not found",
    });
    const r = draPrerequisites({ ...HEALTHY, controller: { status: { availableReplicas: 0 } } });
    expect(r?.stage).toBe("controller");
    expect(r?.verdict.message).toBe(
      "Deployment nvidia-dra-driver/nvidia-dra-driver-gpu-controller is not available: 0 available replicas (expected at least 1)",
    );
  });

  test("kubelet plugin absent or with no ready pod: failed at the plugin", () => {
    expect(draPrerequisites({ ...HEALTHY, plugin: undefined })?.verdict.message).toBe(
      "DaemonSet nvidia-dra-driver/nvidia-dra-driver-gpu-kubelet-plugin not found",
    );
    const r = draPrerequisites({
      ...HEALTHY,
      plugin: { status: { desiredNumberScheduled: 2, numberReady: 0 } },
    });
    expect(r?.stage).toBe("plugin");
    expect(r?.verdict.message).toBe(
      "DaemonSet nvidia-dra-driver/nvidia-dra-driver-gpu-kubelet-plugin has no ready pod: numberReady 0 of 2 desired (expected at least 1)",
    );
  });

  test("no ResourceSlices: failed at the slices", () => {
    const r = draPrerequisites({ ...HEALTHY, slices: [] });
    expect(r?.stage).toBe("slices");
    expect(r?.verdict.message).toBe("no ResourceSlices are published: no DRA driver advertises any device");
  });
});

const pod = (phase: string, exitCode?: number): Pod =>
  ({
    spec: { nodeName: "gpu-node-1", containers: [] },
    status: {
      phase,
      containerStatuses:
        exitCode === undefined
          ? []
          : [
              {
                name: "gpu-test",
                state: { terminated: { exitCode } },
                image: "",
                imageID: "",
                ready: false,
                restartCount: 0,
              },
            ],
    },
  }) as Pod;
const claim = {
  status: {
    allocation: { devices: { results: [{ driver: "gpu.nvidia.com", pool: "gpu-node-1", device: "gpu-3" }] } },
  },
};
const o = { pod: "dra-gpu-test-r", claim: "gpu-claim-r", allocated: claim, waitMs: 300_000 };

describe("claimPodVerdict", () => {
  test("Succeeded: passed, with the probe's summary and the allocated device", () => {
    const v = claimPodVerdict(
      { kind: "ended", pod: pod("Succeeded", 0) },
      { ...o, log: "/dev/nvidia3 (character device 195:3)\n1 GPU device node visible: /dev/nvidia3\n" },
    );
    expect(v.status).toBe("passed");
    expect(v.message).toBe(
      "a pod holding ResourceClaim gpu-claim-r ran on node gpu-node-1 and saw its GPU: 1 GPU device node visible: /dev/nvidia3",
    );
    expect(v.details).toEqual(["ResourceClaim gpu-claim-r: gpu.nvidia.com/gpu-node-1/gpu-3"]);
  });

  test("Failed: failed with the exit code and what the probe said", () => {
    const v = claimPodVerdict(
      { kind: "ended", pod: pod("Failed", 1) },
      { ...o, log: "no /dev/nvidia* device node is visible (expected at least one /dev/nvidia<N>)" },
    );
    expect(v).toMatchObject({
      status: "failed",
      message:
        "the GPU test pod dra-gpu-test-r holding ResourceClaim gpu-claim-r failed (exit code 1): no /dev/nvidia* device node is visible (expected at least one /dev/nvidia<N>)",
    });
  });

  test("stuck and timed out: failed with the reason or the last state", () => {
    expect(
      claimPodVerdict(
        { kind: "stuck", pod: pod("Pending"), reason: "pod is unschedulable: 0/3 nodes" },
        { ...o, log: "" },
      ).message,
    ).toBe("the GPU test pod dra-gpu-test-r cannot run: pod is unschedulable: 0/3 nodes");
    expect(claimPodVerdict({ kind: "timeout", last: pod("Pending") }, { ...o, log: "" }).message).toBe(
      "the GPU test pod dra-gpu-test-r did not finish within 300 s (phase Pending, node gpu-node-1)",
    );
  });
});

import { describe, expect, test } from "bun:test";
import { absent, found, readError } from "../../../../src/validate/checks/_read-outcome.ts";
import {
  type GpuOperatorReads,
  gpuOperatorHealthVerdict,
} from "../../../../src/validate/checks/gpu-operator-health.ts";

const deployment = (name: string, available: number, replicas = 1) => ({
  metadata: { name, namespace: "gpu-operator" },
  spec: { replicas },
  status: { availableReplicas: available },
});
const daemonSet = (ready: number, desired = 2) => ({
  metadata: { name: "nvidia-dcgm-exporter" },
  status: { numberReady: ready, desiredNumberScheduled: desired },
});
const healthy: GpuOperatorReads = {
  labelled: found([deployment("gpu-operator", 1)]),
  clusterPolicy: found({ metadata: { name: "cluster-policy" }, status: { state: "ready" } }),
  dcgmExporter: found(daemonSet(2)),
};

describe("gpu-operator-health verdict", () => {
  test("passed: labelled Deployment available, ClusterPolicy ready, a DCGM exporter pod ready", () => {
    const v = gpuOperatorHealthVerdict(healthy);
    expect(v.status).toBe("passed");
    expect(v.details).toEqual([
      "GPU Operator: Deployment gpu-operator/gpu-operator 1 of 1 available",
      "ClusterPolicy cluster-policy: state ready",
      "DaemonSet gpu-operator/nvidia-dcgm-exporter: 2 of 2 pod(s) ready",
    ]);
  });

  test("the Deployment by name stands in when no Deployment carries the label, or the list failed", () => {
    for (const labelled of [
      found([]),
      readError("listing Deployment in namespace gpu-operator: forbidden"),
    ]) {
      expect(
        gpuOperatorHealthVerdict({ ...healthy, labelled, byName: found(deployment("gpu-operator", 1)) })
          .status,
      ).toBe("passed");
      const down = gpuOperatorHealthVerdict({
        ...healthy,
        labelled,
        byName: found(deployment("gpu-operator", 0, 1)),
      });
      expect(down.status).toBe("failed");
      expect(down.message).toBe(
        "Deployment gpu-operator/gpu-operator has no available replica (0 of 1 available)",
      );
    }
    const none = gpuOperatorHealthVerdict({ ...healthy, labelled: found([]), byName: absent });
    expect(none.message).toBe(
      "the GPU Operator is not installed: no Deployment gpu-operator/gpu-operator (none labelled app.kubernetes.io/name=gpu-operator)",
    );
    const listFailed = gpuOperatorHealthVerdict({
      ...healthy,
      labelled: readError("listing: refused"),
      byName: absent,
    });
    expect(listFailed.message).toContain("listing by label failed: listing: refused");
    const readFailed = gpuOperatorHealthVerdict({
      ...healthy,
      labelled: found([]),
      byName: readError("reading x: boom"),
    });
    expect(readFailed).toMatchObject({ status: "failed", message: "reading x: boom" });
  });

  test("a labelled Deployment with no available replica fails (the original passed it unread)", () => {
    const v = gpuOperatorHealthVerdict({ ...healthy, labelled: found([deployment("gpu-operator", 0, 2)]) });
    expect(v.status).toBe("failed");
    expect(v.message).toBe(
      "the GPU Operator Deployment has no available replica (gpu-operator: 0 of 2 available)",
    );
    // One available among several is enough.
    const two = [deployment("gpu-operator", 0), deployment("gpu-operator-b", 1)];
    expect(gpuOperatorHealthVerdict({ ...healthy, labelled: found(two) }).status).toBe("passed");
  });

  test("ClusterPolicy: missing, without a state, or in any state but ready fails", () => {
    expect(gpuOperatorHealthVerdict({ ...healthy, clusterPolicy: absent }).message).toBe(
      "ClusterPolicy cluster-policy not found",
    );
    expect(gpuOperatorHealthVerdict({ ...healthy, clusterPolicy: found({ status: {} }) }).message).toBe(
      "ClusterPolicy cluster-policy reports no status.state",
    );
    expect(
      gpuOperatorHealthVerdict({ ...healthy, clusterPolicy: found({ status: { state: "notReady" } }) })
        .message,
    ).toBe("ClusterPolicy cluster-policy is not ready: state notReady, expected ready");
    expect(
      gpuOperatorHealthVerdict({ ...healthy, clusterPolicy: readError("reading ClusterPolicy: forbidden") })
        .message,
    ).toBe("reading ClusterPolicy: forbidden");
  });

  test("DCGM exporter: missing or with no ready pod fails", () => {
    expect(gpuOperatorHealthVerdict({ ...healthy, dcgmExporter: absent }).message).toBe(
      "DaemonSet gpu-operator/nvidia-dcgm-exporter not found",
    );
    expect(gpuOperatorHealthVerdict({ ...healthy, dcgmExporter: found(daemonSet(0, 2)) }).message).toBe(
      "DaemonSet gpu-operator/nvidia-dcgm-exporter has no ready pod (0 of 2 ready)",
    );
    expect(gpuOperatorHealthVerdict({ ...healthy, dcgmExporter: found(daemonSet(1, 2)) }).status).toBe(
      "passed",
    );
  });

  test("every failing part is in the message, in order", () => {
    const v = gpuOperatorHealthVerdict({
      labelled: found([]),
      byName: absent,
      clusterPolicy: found({ status: { state: "notReady" } }),
      dcgmExporter: found(daemonSet(0, 0)),
    });
    expect(v.message.split("; ")).toEqual([
      expect.stringContaining("the GPU Operator is not installed"),
      "ClusterPolicy cluster-policy is not ready: state notReady, expected ready",
      "DaemonSet gpu-operator/nvidia-dcgm-exporter has no ready pod (0 of 0 ready)",
    ]);
  });
});

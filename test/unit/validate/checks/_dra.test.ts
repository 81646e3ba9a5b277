import { describe, expect, test } from "bun:test";
import {
  allocatedDevices,
  claimLines,
  cleanupEvidence,
  gpuClaim,
  lastLine,
  podLines,
  probePod,
  sliceLines,
} from "../../../../src/validate/checks/_dra.ts";

const ctx = {
  testNamespace: "aicr-dra-support-20261202-120000-0123456789abcdef",
  labels: { "aicr.run/run-id": "20261202-120000-0123456789abcdef", "app.kubernetes.io/managed-by": "aicr" },
  image: "ghcr.io/nvidia/aicr:v1.2.3",
  placement: {},
};

describe("gpuClaim", () => {
  test("resource.k8s.io/v1, one request gpu: ExactCount 1 of gpu.nvidia.com, in the check's namespace with the run's labels", () => {
    expect(gpuClaim(ctx, "gpu-claim-x", { "kai.scheduler/queue": "default-queue" })).toEqual({
      apiVersion: "resource.k8s.io/v1",
      kind: "ResourceClaim",
      metadata: {
        name: "gpu-claim-x",
        namespace: ctx.testNamespace,
        labels: { ...ctx.labels, "kai.scheduler/queue": "default-queue" },
      },
      spec: {
        devices: {
          requests: [
            {
              name: "gpu",
              exactly: { deviceClassName: "gpu.nvidia.com", allocationMode: "ExactCount", count: 1 },
            },
          ],
        },
      },
    });
  });
});

describe("probePod", () => {
  test("the claim pod: aicr's image running `aicr probe devices`, its claim held by the container, never restarted, no token", () => {
    const pod = probePod(ctx, {
      name: "dra-gpu-test-x",
      container: "gpu-test",
      args: ["probe", "devices"],
      claimName: "c",
    });
    const spec = pod.spec as Record<string, any>;
    expect(pod.metadata).toEqual({
      name: "dra-gpu-test-x",
      namespace: ctx.testNamespace,
      labels: ctx.labels,
    });
    expect(spec.restartPolicy).toBe("Never");
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.tolerations).toEqual([{ operator: "Exists" }]);
    expect(spec.resourceClaims).toEqual([{ name: "gpu", resourceClaimName: "c" }]);
    expect(spec.nodeName).toBeUndefined();
    expect(spec.nodeSelector).toBeUndefined();
    expect(spec.securityContext.runAsNonRoot).toBe(true);
    const [c] = spec.containers;
    expect(c.image).toBe(ctx.image);
    expect([...c.command, ...c.args]).toEqual(["aicr", "probe", "devices"]);
    expect(c.resources.claims).toEqual([{ name: "gpu" }]);
    expect(c.resources.limits["nvidia.com/gpu"]).toBeUndefined();
    expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
    expect(spec.volumes).toBeUndefined();
  });

  test("the isolation pod: no claim, bound to a node; the run's placement added to the toleration of every taint", () => {
    const pod = probePod(
      {
        ...ctx,
        placement: {
          nodeSelector: { pool: "gpu" },
          tolerations: [{ key: "dedicated", operator: "Equal", value: "gpu", effect: "NoSchedule" }],
        },
      },
      {
        name: "dra-no-claim-x",
        container: "isolation-test",
        args: ["probe", "devices", "--expect", "none"],
        nodeName: "gpu-node-1",
        schedulerName: "kai-scheduler",
        extraLabels: { a: "b" },
      },
    );
    const spec = pod.spec as Record<string, any>;
    expect(spec.nodeName).toBe("gpu-node-1");
    expect(spec.schedulerName).toBe("kai-scheduler");
    expect(spec.nodeSelector).toEqual({ pool: "gpu" });
    expect(spec.tolerations).toEqual([
      { operator: "Exists" },
      { key: "dedicated", operator: "Equal", value: "gpu", effect: "NoSchedule" },
    ]);
    expect(spec.resourceClaims).toBeUndefined();
    expect(spec.containers[0].resources.claims).toBeUndefined();
    expect(spec.containers[0].args).toEqual(["probe", "devices", "--expect", "none"]);
    expect(pod.metadata.labels).toEqual({ ...ctx.labels, a: "b" });
  });
});

describe("summaries", () => {
  test("slices: the total, then name, node, driver, pool and device count", () => {
    expect(
      sliceLines([
        {
          metadata: { name: "gpu-node-1-gpu.nvidia.com-abc" },
          spec: {
            driver: "gpu.nvidia.com",
            nodeName: "gpu-node-1",
            pool: { name: "gpu-node-1" },
            devices: [{}, {}],
          },
        },
        {
          metadata: { name: "net" },
          spec: { driver: "net.example.com", allNodes: true, pool: { name: "p" } },
        },
      ]),
    ).toBe(
      "Total ResourceSlices: 2\ngpu-node-1-gpu.nvidia.com-abc\tnode=gpu-node-1\tdriver=gpu.nvidia.com\tpool=gpu-node-1\tdevices=2\nnet\tnode=(all nodes)\tdriver=net.example.com\tpool=p\tdevices=0",
    );
  });

  test("a claim: its allocation while the pod ran, then its state after the pod", () => {
    const claim = {
      status: {
        allocation: {
          devices: { results: [{ request: "gpu", driver: "gpu.nvidia.com", pool: "n1", device: "gpu-0" }] },
        },
        reservedFor: [{ resource: "pods", name: "p", uid: "u" }],
      },
    };
    expect(allocatedDevices(claim)).toEqual(["gpu.nvidia.com/n1/gpu-0"]);
    expect(claimLines("c", claim, {})).toBe(
      "ResourceClaim c\n  allocated while the pod ran: yes\n  devices: gpu.nvidia.com/n1/gpu-0\n  reservedFor: pods/p\n  after the pod: exists, released",
    );
    expect(claimLines("c", claim, claim)).toContain(
      "after the pod: allocated (gpu.nvidia.com/n1/gpu-0), reservedFor pods/p",
    );
    expect(claimLines("c", undefined, undefined)).toBe(
      "ResourceClaim c\n  allocated while the pod ran: no\n  devices: (none)\n  reservedFor: (none)\n  after the pod: not found",
    );
    expect(claimLines("c", undefined, "unread")).toContain("after the pod: not read");
  });

  test("a pod: phase, node, IP, claims, exit code", () => {
    expect(
      podLines(
        {
          spec: { nodeName: "n1", resourceClaims: [{ name: "gpu" }], containers: [] },
          status: {
            phase: "Succeeded",
            podIP: "10.0.0.5",
            containerStatuses: [
              {
                name: "gpu-test",
                image: "i",
                imageID: "",
                ready: false,
                restartCount: 0,
                state: { terminated: { exitCode: 0 } },
              },
            ],
          },
        } as never,
        "p",
      ),
    ).toBe("Pod p\n  phase: Succeeded\n  node: n1\n  podIP: 10.0.0.5\n  resourceClaims: 1\n  exitCode: 0");
  });

  test("lastLine and the cleanup evidence", () => {
    expect(lastLine("a\nb\n\n  \n")).toBe("b");
    expect(lastLine("")).toBe("");
    expect(cleanupEvidence("ns", ["Pod/p: deleted"])).toBe(
      "Pod/p: deleted\nnamespace ns: deleted by the run after the check (UID-pinned)",
    );
  });
});

import { describe, expect, test } from "bun:test";
import type { Pod } from "../../../../src/validate/checks/_dra.ts";
import {
  GROUP_NAME_LABEL,
  gangVerdict,
  gpuAvailability,
  kaiHealthIssue,
  scheduledAt,
  scheduleLines,
} from "../../../../src/validate/checks/gang-scheduling.ts";

describe("gpuAvailability", () => {
  test("devices of gpu.nvidia.com slices, less the gpu.nvidia.com results of every claim", () => {
    const slices = [
      { spec: { driver: "gpu.nvidia.com", devices: [{ name: "gpu-0" }, { name: "gpu-1" }] } },
      { spec: { driver: "gpu.nvidia.com", devices: [{ name: "gpu-0" }] } },
      { spec: { driver: "net.example.com", devices: [{ name: "nic-0" }, { name: "nic-1" }] } },
      { spec: { driver: "gpu.nvidia.com" } },
    ];
    const claims = [
      {
        status: {
          allocation: {
            devices: {
              results: [
                { driver: "gpu.nvidia.com", device: "gpu-0" },
                { driver: "net.example.com", device: "nic-0" },
              ],
            },
          },
        },
      },
      {},
    ];
    expect(gpuAvailability(slices, claims)).toEqual({ total: 3, allocated: 1, free: 2 });
    expect(gpuAvailability([], [])).toEqual({ total: 0, allocated: 0, free: 0 });
  });
});

const GROUP = "gang-group-r";
function worker(
  name: string,
  o: { at?: string; phase?: string; scheduler?: string; group?: string; claims?: number } = {},
) {
  const pod = {
    metadata: { name, labels: { [GROUP_NAME_LABEL]: o.group ?? GROUP } },
    spec: {
      schedulerName: o.scheduler ?? "kai-scheduler",
      nodeName: "gpu-node-1",
      containers: [],
      resourceClaims: Array.from({ length: o.claims ?? 1 }, (_, i) => ({
        name: `gpu${i}`,
        resourceClaimName: "c",
      })),
    },
    status: {
      phase: o.phase ?? "Succeeded",
      conditions:
        o.at === ""
          ? []
          : [{ type: "PodScheduled", status: "True", lastTransitionTime: o.at ?? "2026-12-02T12:00:00Z" }],
    },
  } as unknown as Pod;
  return { name, pod, log: "1 GPU device node visible: /dev/nvidia0" };
}

describe("gangVerdict", () => {
  test("both Succeeded, scheduled 3 s apart: passed", () => {
    const v = gangVerdict(
      [worker("w0", { at: "2026-12-02T12:00:00Z" }), worker("w1", { at: "2026-12-02T12:00:03Z" })],
      GROUP,
    );
    expect(v.status).toBe("passed");
    expect(v.message).toBe(
      "PodGroup gang-group-r (minMember 2): 2 pods scheduled by kai-scheduler within 3 s of each other (allowed 30 s), each got its GPU through its own ResourceClaim",
    );
  });

  test("exactly 30 s apart is within the window; 31 s is not", () => {
    expect(
      gangVerdict(
        [worker("w0", { at: "2026-12-02T12:00:00Z" }), worker("w1", { at: "2026-12-02T12:00:30Z" })],
        GROUP,
      ).status,
    ).toBe("passed");
    const v = gangVerdict(
      [worker("w0", { at: "2026-12-02T12:00:00Z" }), worker("w1", { at: "2026-12-02T12:00:31Z" })],
      GROUP,
    );
    expect(v).toMatchObject({
      status: "failed",
      message: "the gang was not scheduled together: its 2 pods were scheduled 31 s apart (allowed 30 s)",
    });
  });

  test("every per-pod problem is listed", () => {
    const v = gangVerdict(
      [
        worker("w0", { phase: "Failed", scheduler: "default-scheduler" }),
        worker("w1", { group: "other", claims: 0, at: "" }),
      ],
      GROUP,
    );
    expect(v.status).toBe("failed");
    expect(v.details).toEqual([
      "pod w0 did not succeed (phase Failed): 1 GPU device node visible: /dev/nvidia0",
      "pod w0 has schedulerName default-scheduler (expected kai-scheduler)",
      "pod w1 is not in PodGroup gang-group-r (label pod-group.scheduling.run.ai/name)",
      "pod w1 holds no ResourceClaim",
      "pod w1 has no PodScheduled=True condition",
    ]);
    expect(v.message).toStartWith("5 problems with the gang: pod w0 did not succeed");
  });

  test("one problem is the message itself", () => {
    const v = gangVerdict([worker("w0"), worker("w1", { phase: "Failed" })], GROUP);
    expect(v.message).toBe("pod w1 did not succeed (phase Failed): 1 GPU device node visible: /dev/nvidia0");
  });
});

describe("scheduledAt and scheduleLines", () => {
  test("the PodScheduled=True transition; the span, window, earliest and latest", () => {
    const a = worker("w0", { at: "2026-12-02T12:00:00Z" });
    const b = worker("w1", { at: "2026-12-02T12:00:02Z" });
    expect(scheduledAt(a.pod)).toBe(Date.parse("2026-12-02T12:00:00Z"));
    expect(scheduledAt(worker("x", { at: "" }).pod)).toBeUndefined();
    expect(scheduleLines([a, b])).toBe(
      [
        "w0: phase Succeeded, scheduler kai-scheduler, node gpu-node-1, scheduled 2026-12-02T12:00:00.000Z",
        "w1: phase Succeeded, scheduler kai-scheduler, node gpu-node-1, scheduled 2026-12-02T12:00:02.000Z",
        "earliest: 2026-12-02T12:00:00.000Z",
        "latest: 2026-12-02T12:00:02.000Z",
        "span: 2 s",
        "allowed window: 30 s",
      ].join("\n"),
    );
  });
});

describe("kaiHealthIssue", () => {
  test("unavailable or missing Deployments, all named", () => {
    const v = kaiHealthIssue(
      [
        { name: "kai-scheduler-default", workload: { status: { availableReplicas: 1 } } },
        { name: "binder", workload: { status: { availableReplicas: 0 } } },
        { name: "pod-grouper", workload: undefined },
      ],
      [],
      [],
    );
    expect(v?.message).toBe(
      "KAI scheduler Deployments not available in namespace kai-scheduler: binder (0 available), pod-grouper (not found)",
    );
  });

  test("pods not listable; CRDs missing", () => {
    expect(kaiHealthIssue([], { error: "forbidden" }, [])?.message).toBe(
      "the pods in namespace kai-scheduler cannot be listed: forbidden",
    );
    expect(
      kaiHealthIssue(
        [],
        [],
        [
          { name: "queues.scheduling.run.ai", exists: true },
          { name: "podgroups.scheduling.run.ai", exists: false },
        ],
      )?.message,
    ).toBe("gang scheduling CRD not installed: podgroups.scheduling.run.ai");
    expect(kaiHealthIssue([], [], [{ name: "queues.scheduling.run.ai", exists: true }])).toBeUndefined();
  });
});

import { describe, expect, test } from "bun:test";
import { parseQuantity } from "./quantity.ts";
import { type ScheduleContext, schedule, toleratesTaint } from "./scheduler.ts";

const node = (
  name: string,
  opts: { labels?: object; taints?: object[]; gpus?: string; unschedulable?: boolean } = {},
) => ({
  metadata: { name, labels: { "kubernetes.io/hostname": name, ...opts.labels } },
  spec: { taints: opts.taints, unschedulable: opts.unschedulable },
  status: {
    allocatable: {
      cpu: "8",
      memory: "32Gi",
      pods: "110",
      ...(opts.gpus ? { "nvidia.com/gpu": opts.gpus } : {}),
    },
  },
});
const gpuTaint = { key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" };
const gpuNode = node("gpu", { labels: { "nvidia.com/gpu.present": "true" }, gpus: "2" });
const taintedGpu = node("gpu-tainted", {
  labels: { "nvidia.com/gpu.present": "true" },
  gpus: "8",
  taints: [gpuTaint],
});
const cpuNode = node("cpu");
const nodes = [gpuNode, taintedGpu, cpuNode];
const empty: ScheduleContext = { runtimeClasses: [], podsOnNodes: {} };

const pod = (spec: object) => ({
  metadata: { name: "p", namespace: "ns" },
  spec: { containers: [{ name: "c" }], ...spec },
});
const gpuReq = (n: string) => [{ name: "c", resources: { limits: { "nvidia.com/gpu": n } } }];

describe("schedule", () => {
  test.each([
    ["plain pod goes to the least loaded untainted node", pod({}), "cpu"],
    ["nodeSelector", pod({ nodeSelector: { "nvidia.com/gpu.present": "true" } }), "gpu"],
    [
      "toleration reaches the tainted node",
      pod({
        nodeSelector: { "kubernetes.io/hostname": "gpu-tainted" },
        tolerations: [{ key: "nvidia.com/gpu", operator: "Exists" }],
      }),
      "gpu-tainted",
    ],
    [
      "affinity In",
      pod({
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: ["gpu"] }] },
              ],
            },
          },
        },
      }),
      "gpu",
    ],
    [
      "affinity DoesNotExist",
      pod({
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: "nvidia.com/gpu.present", operator: "DoesNotExist" }] },
              ],
            },
          },
        },
      }),
      "cpu",
    ],
    ["gpu request fits only where allocatable", pod({ containers: gpuReq("2") }), "gpu"],
    [
      "gpu request beyond the untainted node needs the toleration",
      pod({ containers: gpuReq("4"), tolerations: [{ operator: "Exists" }] }),
      "gpu-tainted",
    ],
  ] as [string, object, string][])("%s", (_n, p, want) => {
    expect(schedule(p, nodes, empty)).toEqual({ nodeName: want });
  });

  test("the issue's example message", () => {
    const res = schedule(
      pod({ nodeSelector: { "nvidia.com/gpu.present": "true", "kubernetes.io/hostname": "gpu-x" } }),
      [gpuNode, taintedGpu, taintedGpu],
      empty,
    );
    expect(res).toEqual({
      unschedulable:
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) had untolerated taint {nvidia.com/gpu: present}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    });
  });

  test("gpus used by other pods count against allocatable", () => {
    const busy = { ...pod({ containers: gpuReq("2") }), status: { phase: "Running" } };
    const done = { ...pod({ containers: gpuReq("2") }), status: { phase: "Succeeded" } };
    const ctx: ScheduleContext = { runtimeClasses: [], podsOnNodes: { gpu: [busy] } };
    const res = schedule(pod({ containers: gpuReq("1") }), nodes, ctx);
    expect(res).toEqual({
      unschedulable:
        "0/3 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 2 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
    });
    expect(
      schedule(pod({ containers: gpuReq("1") }), nodes, { runtimeClasses: [], podsOnNodes: { gpu: [done] } }),
    ).toEqual({
      nodeName: "gpu",
    });
  });

  test("cordoned node", () => {
    const res = schedule(pod({}), [node("a", { unschedulable: true })], empty);
    expect(res).toEqual({
      unschedulable:
        "0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    });
  });

  test("runtimeClass must exist; its scheduling constraints apply", () => {
    expect(schedule(pod({ runtimeClassName: "nvidia" }), nodes, empty)).toEqual({
      unschedulable: 'pod rejected: RuntimeClass "nvidia" not found',
    });
    const rc = {
      metadata: { name: "nvidia" },
      handler: "nvidia",
      scheduling: { nodeSelector: { "nvidia.com/gpu.present": "true" } },
    };
    expect(
      schedule(pod({ runtimeClassName: "nvidia" }), nodes, { runtimeClasses: [rc], podsOnNodes: {} }),
    ).toEqual({
      nodeName: "gpu",
    });
  });

  test("no nodes", () => {
    expect(schedule(pod({}), [], empty)).toEqual({ unschedulable: "no nodes available to schedule pods" });
  });
});

describe("toleratesTaint", () => {
  test.each([
    [{ operator: "Exists" }, gpuTaint, true],
    [{ key: "nvidia.com/gpu", operator: "Exists" }, gpuTaint, true],
    [{ key: "nvidia.com/gpu", value: "present" }, gpuTaint, true],
    [{ key: "nvidia.com/gpu", operator: "Equal", value: "absent" }, gpuTaint, false],
    [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoExecute" }, gpuTaint, false],
    [{ key: "other", operator: "Exists" }, gpuTaint, false],
  ])("%j", (t, taint, want) => {
    expect(toleratesTaint(t, taint)).toBe(want);
  });
});

describe("parseQuantity", () => {
  test.each([
    ["1", 1],
    ["500m", 0.5],
    ["1Gi", 2 ** 30],
    ["1G", 1e9],
    ["1.5", 1.5],
    ["1e3", 1000],
  ] as [string, number][])("%p", (q, want) => {
    expect(parseQuantity(q)).toBe(want);
  });
  test("garbage", () => {
    expect(() => parseQuantity("abc")).toThrow();
  });
});

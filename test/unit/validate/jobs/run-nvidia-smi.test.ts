import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Json, V1Node } from "../../../../src/kube/types.ts";
import { MAX_NVIDIA_SMI_NODES, type PlannedCheck } from "../../../../src/validate/_catalog.ts";
import type { CheckResult } from "../../../../src/validate/_report.ts";
import { mergeNodeRows } from "../../../../src/validate/jobs/_run-nvidia-smi.ts";
import { nvidiaSmiVerdict, sampleGpuNodes, smiGpuCount } from "../../../../src/validate/validator/_checks.ts";

const node = (
  name: string,
  gpus: number,
  o: { label?: boolean; allocatable?: number; labels?: Record<string, string> } = {},
) =>
  ({
    metadata: {
      name,
      labels: {
        ...(o.label === false ? {} : gpus > 0 ? { "nvidia.com/gpu.present": "true" } : {}),
        ...o.labels,
      },
    },
    status: {
      capacity: gpus > 0 ? { "nvidia.com/gpu": String(gpus) } : {},
      allocatable: gpus > 0 ? { "nvidia.com/gpu": String(o.allocatable ?? gpus) } : {},
    },
  }) as Json<V1Node>;

test("the fake nvidia-smi's recording counts 8 GPUs; other output counts none", () => {
  const xml = readFileSync(join(import.meta.dir, "../../../fixtures/bin/h100/nvidia-smi.xml"), "utf8");
  expect(smiGpuCount(xml)).toBe(8);
  expect(smiGpuCount("<nvidia_smi_log><gpu id='a'></gpu><gpu id='b'></gpu></nvidia_smi_log>")).toBe(2);
  expect(smiGpuCount("NVIDIA-SMI has failed")).toBeUndefined();
});

test("a node passes when nvidia-smi's count equals its capacity; a failure names the node and both counts", () => {
  expect(nvidiaSmiVerdict("gpu-1", node("gpu-1", 8), { gpus: 8 })).toMatchObject({
    status: "passed",
    message: "node gpu-1: nvidia-smi reports 8 GPU(s), matching capacity nvidia.com/gpu=8, allocatable 8",
  });
  expect(nvidiaSmiVerdict("gpu-2", node("gpu-2", 4), { gpus: 8 })).toMatchObject({
    status: "failed",
    message:
      "node gpu-2: nvidia-smi reports 8 GPU(s), but the node's capacity nvidia.com/gpu=4, allocatable 4",
  });
  expect(
    nvidiaSmiVerdict("gpu-3", node("gpu-3", 8), { problem: "nvidia-smi exited 9: no devices" }).message,
  ).toBe("node gpu-3: nvidia-smi exited 9: no devices (capacity nvidia.com/gpu=8, allocatable 8)");
});

test("GPU nodes by label or capacity, filtered by the node selector, at most 8, sampled the same way every time", () => {
  const nodes = [
    node("cpu", 0),
    node("b", 8),
    node("a", 8, { label: false }),
    node("c", 8, { labels: { pool: "x" } }),
  ];
  expect(sampleGpuNodes(nodes, undefined, 8).nodes.map((n) => n.metadata?.name)).toEqual(["a", "b", "c"]);
  expect(sampleGpuNodes(nodes, { pool: "x" }, 8).nodes.map((n) => n.metadata?.name)).toEqual(["c"]);
  const many = Array.from({ length: 20 }, (_, i) => node(`gpu-${String(i).padStart(2, "0")}`, 8)).reverse();
  const a = sampleGpuNodes(many, undefined, MAX_NVIDIA_SMI_NODES);
  expect(a.total).toBe(20);
  expect(a.nodes.map((n) => n.metadata?.name)).toEqual(
    [0, 2, 5, 7, 10, 12, 15, 17].map((i) => `gpu-${String(i).padStart(2, "0")}`),
  );
  expect(sampleGpuNodes([...many].reverse(), undefined, MAX_NVIDIA_SMI_NODES).nodes).toEqual(a.nodes);
});

test("one row for all nodes: failures named, failed before other before passed; no GPU node → skipped", () => {
  const check: PlannedCheck = { phase: "deployment", name: "check-nvidia-smi", skipped: false };
  const row = (status: CheckResult["status"], message: string): CheckResult => ({
    suite: "deployment",
    name: "check-nvidia-smi",
    durationMs: 1,
    status,
    message,
    stdout: [message],
  });
  const merged = mergeNodeRows(
    check,
    [
      { node: "a", row: row("passed", "node a: ok") },
      {
        node: "b",
        row: row("failed", "node b: nvidia-smi reports 8 GPU(s), but the node's capacity nvidia.com/gpu=4"),
      },
      { node: "c", row: row("other", "the check's pod cannot run: Unschedulable") },
    ],
    { total: 3, max: 8 },
    5,
  );
  expect(merged.status).toBe("failed");
  expect(merged.message).toBe(
    "node b: nvidia-smi reports 8 GPU(s), but the node's capacity nvidia.com/gpu=4; node c: the check's pod cannot run: Unschedulable",
  );
  expect(merged.stdout[0]).toBe("[a] node a: ok");
  const passed = mergeNodeRows(check, [{ node: "a", row: row("passed", "ok") }], { total: 12, max: 8 }, 5);
  expect(passed.message).toBe(
    "1 GPU node(s): nvidia-smi reports each node's nvidia.com/gpu capacity (1 of 12 GPU nodes, sampled: at most 8)",
  );
  expect(mergeNodeRows(check, [], { total: 0, max: 8 }, 0).status).toBe("skipped");
});

test("a cordoned GPU node is left out of the sample and named in the report", () => {
  const gpu = (name: string, unschedulable = false) =>
    ({
      metadata: { name, labels: { "nvidia.com/gpu.present": "true" } },
      spec: unschedulable ? { unschedulable: true } : {},
    }) as Parameters<typeof sampleGpuNodes>[0][number];
  const sample = sampleGpuNodes([gpu("a"), gpu("b", true), gpu("c")], undefined, 8);
  expect(sample.nodes.map((n) => n.metadata?.name)).toEqual(["a", "c"]);
  expect(sample.cordoned).toEqual(["b"]);
  const row = mergeNodeRows(
    { phase: "deployment", name: "check-nvidia-smi", skipped: false },
    [],
    { total: 0, max: 8, cordoned: ["b"] },
    0,
  );
  expect(row.message).toEndWith("(cordoned, left out: b)");
});

import { describe, expect, test } from "bun:test";
import {
  collectTopology,
  emptyTally,
  formatNodeList,
  tallyNodes,
  topologyMeasurement,
} from "../../../src/collect/_topology.ts";
import type { Json, V1Node } from "../../../src/kube/types.ts";
import { FakeCluster } from "./_fake-cluster.ts";
import { collectorOptions } from "./_helpers.ts";

function node(name: string, labels: Record<string, string>, taints: Json<V1Node>["spec"] = {}): Json<V1Node> {
  return { metadata: { name, labels }, spec: taints };
}

const NODES: Json<V1Node>[] = [
  node(
    "gpu-b",
    { pool: "gpu", "nvidia.com/gpu.present": "true" },
    {
      taints: [{ key: "nvidia.com/gpu", effect: "NoSchedule" }],
    },
  ),
  node(
    "gpu-a",
    { pool: "gpu", "nvidia.com/gpu.present": "true" },
    {
      taints: [
        { key: "nvidia.com/gpu", effect: "NoSchedule" },
        { key: "dedicated", value: "training", effect: "NoExecute" },
      ],
    },
  ),
  node("cpu-a", { pool: "cpu" }, { taints: [{ key: "nvidia.com/gpu", effect: "PreferNoSchedule" }] }),
];

describe("NodeTopology encodings", () => {
  const tally = emptyTally();
  tallyNodes(NODES, tally);
  const m = topologyMeasurement(tally, 0);

  test("summary counts nodes and distinct taints and labels", () => {
    expect(m.subtypes[0]).toEqual({
      subtype: "summary",
      data: { "node-count": 3, "taint-count": 3, "label-count": 3 },
    });
  });

  test("taints: effect|value|nodes, or key.effect → value|nodes when a key has several taints", () => {
    expect(m.subtypes[1]).toEqual({
      subtype: "taint",
      data: {
        dedicated: "NoExecute|training|gpu-a",
        "nvidia.com/gpu.NoSchedule": "|gpu-a,gpu-b",
        "nvidia.com/gpu.PreferNoSchedule": "|cpu-a",
      },
    });
  });

  test("labels: value|nodes, or key.value when a key has several values", () => {
    expect(m.subtypes[2]).toEqual({
      subtype: "label",
      data: {
        "nvidia.com/gpu.present": "true|gpu-a,gpu-b",
        "pool.cpu": "cpu|cpu-a",
        "pool.gpu": "gpu|gpu-a,gpu-b",
      },
    });
  });

  test("truncation keeps the first N sorted names and counts the rest", () => {
    expect(formatNodeList(["c", "a", "d", "b"], 2)).toBe("a,b (+2 more)");
    expect(formatNodeList(["b", "a"], 2)).toBe("a,b");
    expect(formatNodeList(["b", "a"], 0)).toBe("a,b");
  });
});

describe("NodeTopology collector", () => {
  test("pages through 1100 nodes in pages of 500 and truncates lists", async () => {
    const nodes = Array.from({ length: 1100 }, (_, i) =>
      node(`node-${String(i).padStart(4, "0")}`, { pool: "gpu" }),
    );
    const fake = new FakeCluster({ nodes });
    const m = await collectTopology({ ...collectorOptions("/"), cluster: fake, maxNodesPerEntry: 2 });
    expect(fake.pageCalls.nodes).toBe(3);
    expect(m.subtypes[0]?.data["node-count"]).toBe(1100);
    expect(m.subtypes[2]?.data.pool).toBe("gpu|node-0000,node-0001 (+1098 more)");
  });

  test("an empty cluster gives zero counts and empty maps", async () => {
    const m = await collectTopology({
      ...collectorOptions("/"),
      cluster: new FakeCluster({}),
      maxNodesPerEntry: 0,
    });
    expect(m.subtypes).toEqual([
      { subtype: "summary", data: { "node-count": 0, "taint-count": 0, "label-count": 0 } },
      { subtype: "taint", data: {} },
      { subtype: "label", data: {} },
    ]);
  });
});

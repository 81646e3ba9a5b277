import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  keySegment,
  lookupReading,
  nearestPath,
  readingPaths,
  readingsByPath,
  readingText,
  splitPath,
} from "../../../src/snapshot/readings.ts";
import { parseSnapshot, type Snapshot } from "../../../src/snapshot/schema.ts";

const snapshot = parseSnapshot(
  readFileSync(join(import.meta.dir, "../../validate/fixtures/snapshot-h100.yaml"), "utf8"),
  "fixture",
);

const doc = (measurements: Snapshot["measurements"]): Snapshot => ({
  apiVersion: "aicr.run/v1",
  kind: "Snapshot",
  metadata: { timestamp: "2026-01-01T00:00:00Z", version: "v1", "source-node": "n", "run-id": "r" },
  measurements,
});

describe("reading paths", () => {
  test("readings, subtype context, item count and items by position; metadata is no reading", () => {
    const paths = readingsByPath(
      doc([
        {
          type: "NetworkTopology",
          subtypes: [
            {
              subtype: "group-0",
              context: { fabric: "ib" },
              data: { "pf-count": 2 },
              items: [{ context: { pf: "mlx5_0" }, data: { link: "up" } }, { data: { link: "down" } }],
            },
          ],
        },
        { type: "OS", subtypes: [{ subtype: "sysctl", data: { "/proc/sys/kernel/osrelease": "6.8" } }] },
      ]),
    );
    expect([...paths]).toEqual([
      ["NetworkTopology.group-0.pf-count", 2],
      ["NetworkTopology.group-0.context.fabric", "ib"],
      ["NetworkTopology.group-0.items.length", 2],
      ["NetworkTopology.group-0.items[0].context.pf", "mlx5_0"],
      ["NetworkTopology.group-0.items[0].data.link", "up"],
      ["NetworkTopology.group-0.items[1].data.link", "down"],
      ["OS.sysctl./proc/sys/kernel/osrelease", "6.8"],
    ]);
  });

  test("keys that would read as context or items are bracket-quoted", () => {
    expect(keySegment("context")).toBe('["context"]');
    expect(keySegment("items")).toBe('["items"]');
    expect(keySegment("context.node")).toBe('["context.node"]');
    expect(keySegment("items.length")).toBe('["items.length"]');
    expect(keySegment("items[0]")).toBe('["items[0]"]');
    expect(keySegment("contexts")).toBe(".contexts");
    expect(keySegment("gpu.model")).toBe(".gpu.model");
    const paths = readingsByPath(
      doc([
        {
          type: "K8s",
          subtypes: [{ subtype: "node", data: { "context.node": "a" }, context: { node: "b" } }],
        },
      ]),
    );
    expect([...paths.keys()]).toEqual(['K8s.node["context.node"]', "K8s.node.context.node"]);
  });

  test("a subtype named twice reads as its first", () => {
    const paths = readingsByPath(
      doc([
        {
          type: "SystemD",
          subtypes: [
            { subtype: "kubelet.service", data: { ActiveState: "active" } },
            { subtype: "kubelet.service", data: { ActiveState: "failed", Extra: "x" } },
          ],
        },
      ]),
    );
    expect([...paths]).toEqual([["SystemD.kubelet.service.ActiveState", "active"]]);
  });
});

describe("readings", () => {
  test("a name splits on its first two dots only", () => {
    expect(splitPath("OS.sysctl./proc/sys/kernel/osrelease")).toEqual({
      type: "OS",
      subtype: "sysctl",
      key: "/proc/sys/kernel/osrelease",
    });
    expect(splitPath("K8s.helm.gpu-operator.version")?.key).toBe("gpu-operator.version");
    expect(splitPath("K8s.server")).toBeUndefined();
  });

  test("lookup renders the reading as text; absent → undefined", () => {
    expect(readingText(snapshot, "GPU.hardware.gpu-count")).toBe("8");
    expect(readingText(snapshot, "GPU.hardware.gpu-present")).toBe("true");
    expect(readingText(snapshot, "OS.release.NAME")).toBeUndefined();
    expect(readingText(snapshot, "SystemD.x.y")).toBeUndefined();
  });

  test("a typo gets the nearest known path; nonsense gets none", () => {
    const paths = readingPaths(snapshot);
    expect(nearestPath("K8s.server.versoin", paths)).toBe("K8s.server.version");
    expect(nearestPath("os.release.id", paths)).toBe("OS.release.ID");
    expect(nearestPath("NodeTopology.summary.node-count", paths)).toBeUndefined();
  });
});

describe("one grammar for look-up and listing", () => {
  const network = doc([
    {
      type: "NetworkTopology",
      subtypes: [
        {
          subtype: "group-0",
          context: { fabric: "ib" },
          data: { "pf-count": 2, "context.node": "quoted" },
          items: [{ context: { pf: "mlx5_0" }, data: { link: "up" } }],
        },
      ],
    },
    {
      type: "SystemD",
      subtypes: [
        { subtype: "kubelet.service", data: { ActiveState: "active" } },
        { subtype: "kubelet.service", data: { ActiveState: "failed" } },
      ],
    },
  ]);

  test("every listed path looks up to its value", () => {
    const listed = readingsByPath(network);
    expect(listed.size).toBe(7);
    for (const [path, value] of listed) expect(lookupReading(network, path)).toBe(value);
  });

  test("context, item count, items, quoted keys and dotted subtypes", () => {
    expect(lookupReading(network, "NetworkTopology.group-0.context.fabric")).toBe("ib");
    expect(lookupReading(network, "NetworkTopology.group-0.items.length")).toBe(1);
    expect(lookupReading(network, "NetworkTopology.group-0.items[0].data.link")).toBe("up");
    expect(lookupReading(network, "NetworkTopology.group-0.items[0].context.pf")).toBe("mlx5_0");
    expect(lookupReading(network, "NetworkTopology.group-0.items[1].data.link")).toBeUndefined();
    expect(lookupReading(network, 'NetworkTopology.group-0["context.node"]')).toBe("quoted");
    expect(lookupReading(network, 'NetworkTopology.group-0["pf-count"]')).toBe(2);
    // A reading key written unquoted is still found when the context has no such key.
    expect(lookupReading(network, "NetworkTopology.group-0.context.node")).toBe("quoted");
    expect(lookupReading(network, "NetworkTopology.group-0.context.absent")).toBeUndefined();
    expect(lookupReading(network, "NetworkTopology.group-0.items.size")).toBeUndefined();
    expect(lookupReading(network, "SystemD.kubelet.service.ActiveState")).toBe("active");
    expect(lookupReading(network, "NetworkTopology.group-0.constructor")).toBeUndefined();
  });

  test("a split without the snapshot names the place a path reads", () => {
    expect(splitPath("K8s.node.context.node")).toEqual({
      type: "K8s",
      subtype: "node",
      key: "node",
      in: "context",
    });
    expect(splitPath('K8s.node["items"]')).toEqual({ type: "K8s", subtype: "node", key: "items" });
    expect(splitPath("N.g.items[3].data.link")).toEqual({
      type: "N",
      subtype: "g",
      key: "link",
      in: { item: 3, of: "data" },
    });
    expect(splitPath("K8s.node.items")).toBeUndefined();
    expect(splitPath("SystemD.kubelet.service.ActiveState", "kubelet.service")?.key).toBe("ActiveState");
  });
});

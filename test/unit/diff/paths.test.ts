import { describe, expect, test } from "bun:test";
import { keySegment, readingsByPath } from "../../../src/diff/paths.ts";
import type { Snapshot } from "../../../src/snapshot/schema.ts";

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

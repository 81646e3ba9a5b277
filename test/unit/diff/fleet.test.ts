import { describe, expect, test } from "bun:test";
import { type FleetNode, fleetDrift, readingKey } from "../../../src/diff/fleet.ts";
import { ignoreMatcher } from "../../../src/diff/glob.ts";
import type { Readings, Snapshot } from "../../../src/snapshot/schema.ts";

/** A node whose OS.sysctl readings are `data` (and whose hostname sysctl is its name). */
function node(name: string, data: Readings): FleetNode {
  const snapshot: Snapshot = {
    apiVersion: "aicr.run/v1",
    kind: "Snapshot",
    metadata: { "source-node": name, timestamp: `2026-01-0${name.length % 9}T00:00:00Z`, version: "0.1.0" },
    measurements: [
      {
        type: "OS",
        subtypes: [{ subtype: "sysctl", data: { "/proc/sys/kernel/hostname": name, ...data } }],
      },
    ],
  };
  return { name, snapshot };
}

const fleet = (rows: Record<string, Readings>): FleetNode[] =>
  Object.entries(rows).map(([name, data]) => node(name, data));

describe("fleet drift", () => {
  test("the same value everywhere (as diff reads it: v1.2.0 = 1.2 = 1.2.0) is no drift", () => {
    const r = fleetDrift(
      fleet({ a: { v: "v1.2.0", n: 3 }, b: { v: "1.2", n: "3" }, c: { v: "1.2.0", n: 3 } }),
    );
    expect(r.drift).toEqual([]);
    expect(r.summary).toEqual({ readings: 0, nodes: 3, differing: 0, nodeSpecific: 1, ignored: 0 });
  });

  test("groups: majority first, names sorted, an absent reading its own group", () => {
    const r = fleetDrift(
      fleet({
        e: { k: "5.15" },
        d: { k: "5.15" },
        c: { k: "6.8" },
        b: { k: "5.15", extra: "x" },
        a: {},
      }),
    );
    expect(r.nodes).toEqual(["a", "b", "c", "d", "e"]);
    expect(r.drift).toEqual([
      {
        path: "OS.sysctl.extra",
        groups: [
          { value: null, count: 4, nodes: ["a", "c", "d", "e"] },
          { value: "x", count: 1, nodes: ["b"] },
        ],
      },
      {
        path: "OS.sysctl.k",
        groups: [
          { value: "5.15", count: 3, nodes: ["b", "d", "e"] },
          { value: "6.8", count: 1, nodes: ["c"] },
          { value: null, count: 1, nodes: ["a"] },
        ],
      },
    ]);
    expect(r.summary).toEqual({ readings: 2, nodes: 5, differing: 3, nodeSpecific: 1, ignored: 0 });
  });

  test("ties are broken by the value's text, whatever the input order", () => {
    const one = fleetDrift(fleet({ a: { k: "y" }, b: { k: "x" } }));
    const two = fleetDrift(fleet({ b: { k: "x" }, a: { k: "y" } }));
    expect(one).toEqual(two);
    expect(one.drift[0]?.groups.map((g) => g.value)).toEqual(["x", "y"]);
  });

  test("a group shows the value as its first node wrote it", () => {
    const r = fleetDrift(fleet({ a: { v: "v1.2" }, b: { v: "1.2.0" }, c: { v: "2.0" } }));
    expect(r.drift[0]?.groups[0]).toEqual({ value: "v1.2", count: 2, nodes: ["a", "b"] });
  });

  test("node-specific by value: distinct identity-shaped values are left out, counted", () => {
    const r = fleetDrift(
      fleet({
        a: { dns: "a.internal", bus: "0000:1b:00.0", kernel: "6.8" },
        b: { dns: "b.internal", bus: "0000:2b:00.0", kernel: "6.9" },
      }),
    );
    expect(r.drift.map((d) => d.path)).toEqual(["OS.sysctl.kernel"]);
    expect(r.summary.nodeSpecific).toBe(3);
  });

  test("--ignore adds to the rule", () => {
    const r = fleetDrift(fleet({ a: { k: "1", j: "x" }, b: { k: "2", j: "y" } }), {
      ignored: ignoreMatcher(["OS.sysctl.k"]),
    });
    expect(r.drift.map((d) => d.path)).toEqual(["OS.sysctl.j"]);
    expect(r.summary.ignored).toBe(1);
  });

  test("a baseline node: its group first, then the rest majority first", () => {
    const nodes = fleet({
      a: { k: "1" },
      b: { k: "2" },
      c: { k: "2" },
      d: { k: "1" },
      e: { k: "2" },
      f: { k: "3" },
    });
    const a = nodes.find((n) => n.name === "a");
    if (!a) throw new Error("a");
    const r = fleetDrift(nodes, { baseline: { name: "a", snapshot: a.snapshot, member: true } });
    expect(r.drift[0]?.groups).toEqual([
      { value: "1", count: 2, nodes: ["a", "d"], baseline: true },
      { value: "2", count: 3, nodes: ["b", "c", "e"] },
      { value: "3", count: 1, nodes: ["f"] },
    ]);
    expect(r.summary.differing).toBe(4);
  });

  test("a baseline file: every node that differs from it, even when the fleet agrees", () => {
    const nodes = fleet({ a: { k: "1", same: "s" }, b: { k: "1", same: "s" } });
    const base = node("golden", { k: "v2", only: "o", same: "s" }).snapshot;
    const r = fleetDrift(nodes, { baseline: { name: "golden.yaml", snapshot: base, member: false } });
    expect(r.drift).toEqual([
      {
        path: "OS.sysctl.k",
        groups: [
          { value: "v2", count: 0, nodes: [], baseline: true },
          { value: "1", count: 2, nodes: ["a", "b"] },
        ],
      },
      {
        path: "OS.sysctl.only",
        groups: [
          { value: "o", count: 0, nodes: [], baseline: true },
          { value: null, count: 2, nodes: ["a", "b"] },
        ],
      },
    ]);
    expect(r.summary.differing).toBe(2);
  });

  test("readingKey: the equality classes of sameReading", () => {
    expect(readingKey("v1.33.4")).toBe(readingKey("1.33.4"));
    expect(readingKey("1.33")).toBe(readingKey("1.33.0"));
    expect(readingKey("1.33")).not.toBe(readingKey("1.33.4"));
    expect(readingKey(300)).toBe(readingKey("300"));
    expect(readingKey("1.0-rc1")).not.toBe(readingKey("1.0"));
    expect(readingKey(true)).toBe(readingKey("true"));
  });
});

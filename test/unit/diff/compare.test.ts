import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { countChanges, diffSnapshots, sameReading } from "../../../src/diff/compare.ts";
import { ignoreMatcher } from "../../../src/diff/glob.ts";
import { parseSnapshot } from "../../../src/snapshot/schema.ts";

const FIXTURES = join(import.meta.dir, "../../fixtures/diff");
const read = (name: string) => parseSnapshot(readFileSync(join(FIXTURES, name), "utf8"), name);

describe("sameReading", () => {
  test("versions written differently are the same reading", () => {
    expect(sameReading("v1.33.4", "1.33.4")).toBe(true);
    expect(sameReading("1.33", "1.33.0")).toBe(true);
    expect(sameReading("v1.33.4-eks-3025e55", "1.33.4-eks-3025e55")).toBe(true);
  });
  test("a different version, suffix or precision is drift", () => {
    expect(sameReading("1.33", "1.33.4")).toBe(false);
    expect(sameReading("v1.33.4-eks-1", "v1.33.4-eks-2")).toBe(false);
    expect(sameReading("v25.10.1", "v25.10.2")).toBe(false);
  });
  test("values compare as text otherwise, as constraints read them", () => {
    expect(sameReading(8, "8")).toBe(true);
    expect(sameReading(true, "true")).toBe(true);
    expect(sameReading("", "0")).toBe(false);
    expect(sameReading("ubuntu", "rhel")).toBe(false);
  });
});

describe("diffSnapshots", () => {
  test("the fixture pair: added, removed and changed readings, items by position, sorted by path", () => {
    const changes = diffSnapshots(read("baseline.yaml"), read("target.yaml"));
    expect(changes).toEqual([
      { path: "K8s.image.dcgm-exporter", kind: "removed", baseline: "4.1.1", target: null },
      { path: "K8s.image.gpu-operator", kind: "changed", baseline: "v25.10.1", target: "v25.10.2" },
      { path: "K8s.image.node-feature-discovery", kind: "added", baseline: null, target: "v0.17.3" },
      { path: 'K8s.node["context.node"]', kind: "changed", baseline: "gpu-node-1", target: "gpu-node-2" },
      {
        path: "NetworkTopology.group-0.context.fabric",
        kind: "changed",
        baseline: "infiniband",
        target: "ethernet",
      },
      { path: "NetworkTopology.group-0.items.length", kind: "changed", baseline: 2, target: 3 },
      { path: "NetworkTopology.group-0.items[1].data.link", kind: "changed", baseline: "up", target: "down" },
      {
        path: "NetworkTopology.group-0.items[2].context.pf",
        kind: "added",
        baseline: null,
        target: "mlx5_2",
      },
      { path: "NetworkTopology.group-0.items[2].data.link", kind: "added", baseline: null, target: "up" },
    ]);
    expect(countChanges(changes)).toEqual({ added: 3, removed: 1, modified: 5, total: 9 });
  });

  test("metadata (timestamp, version, node, run ID, pod and job UIDs) is never drift", () => {
    expect(diffSnapshots(read("baseline.yaml"), read("metadata-only.yaml"))).toEqual([]);
  });

  test("the same document has no drift; reversed sides swap added and removed", () => {
    expect(diffSnapshots(read("target.yaml"), read("target.yaml"))).toEqual([]);
    const back = diffSnapshots(read("target.yaml"), read("baseline.yaml"));
    expect(countChanges(back)).toEqual({ added: 1, removed: 3, modified: 5, total: 9 });
  });

  test("ignored paths are left out of the changes and the summary", () => {
    const changes = diffSnapshots(
      read("baseline.yaml"),
      read("target.yaml"),
      ignoreMatcher(["K8s.image.**", "NetworkTopology.**"]),
    );
    expect(changes.map((c) => c.path)).toEqual(['K8s.node["context.node"]']);
  });

  test("a measurements-only document compares with a full one", () => {
    const changes = diffSnapshots(read("measurements-only.yaml"), read("baseline.yaml"));
    expect(changes.find((c) => c.path === "K8s.server.version")).toEqual({
      path: "K8s.server.version",
      kind: "changed",
      baseline: "v1.33.0",
      target: "v1.33.4",
    });
    expect(changes.find((c) => c.path === "OS.release.VERSION_ID")).toBeUndefined();
    expect(changes.filter((c) => c.path.startsWith("K8s.helm.")).map((c) => c.kind)).toEqual([
      "removed",
      "removed",
      "removed",
    ]);
  });
});

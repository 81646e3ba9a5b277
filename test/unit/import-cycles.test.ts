import { describe, expect, test } from "bun:test";
import { findCycles } from "../../scripts/import-cycles.ts";

const graph = (edges: Record<string, string[]>) =>
  new Map(Object.entries(edges).map(([k, v]) => [k, new Set(v)]));

describe("findCycles (the layer check's import-cycle rule)", () => {
  test("an acyclic graph has none", () => {
    expect(findCycles(graph({ a: ["b", "c"], b: ["c"], c: [] }))).toEqual([]);
  });

  test("a two-file cycle is reported once, from its smallest name, closed", () => {
    const g = graph({
      "validate/jobs/run-checks.ts": ["validate/flow.ts"],
      "validate/flow.ts": ["validate/jobs/run-checks.ts"],
    });
    expect(findCycles(g)).toEqual([["validate/flow.ts", "validate/jobs/run-checks.ts", "validate/flow.ts"]]);
  });

  test("a longer cycle behind an acyclic entry, and a self-import", () => {
    const g = graph({ entry: ["x"], x: ["y"], y: ["z"], z: ["x"], self: ["self"] });
    expect(findCycles(g).sort()).toEqual([
      ["self", "self"],
      ["x", "y", "z", "x"],
    ]);
  });
});

/** scripts/import-cycles.ts as a program: a graph on stdin, its cycles on stdout (exit 1 when there is one). */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";

const SCRIPT = join(import.meta.dir, "../../scripts/import-cycles.ts");

const graph = (edges: Record<string, string[]>) => edges;

function findCycles(edges: Record<string, string[]>): string[][] {
  const r = Bun.spawnSync([process.execPath, SCRIPT], {
    stdin: new TextEncoder().encode(JSON.stringify(edges)),
    stdout: "pipe",
    stderr: "pipe",
  });
  const cycles = JSON.parse(r.stdout.toString()) as string[][];
  expect(r.exitCode).toBe(cycles.length > 0 ? 1 : 0);
  return cycles;
}

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

/**
 * Reading the Go original's snapshot documents through the binary: its measurements-only CLI test
 * fixture, and its v0.11.1 apiVersion, are read by `aicr validate -s` as they are.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { aicr, ROOT } from "./_aicr.ts";

const BARE = join(ROOT, "test/fixtures/diff/measurements-only.yaml");
let dir: string;
let recipe: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-interop-"));
  recipe = join(dir, "recipe.yaml");
  // Constraints the original's fixture satisfies, the helm subtype included.
  writeFileSync(
    recipe,
    `kind: RecipeMetadata
spec:
  constraints:
    - {name: K8s.server.version, value: ">= 1.32"}
    - {name: K8s.helm.gpu-operator.version, value: ">= v25.3"}
    - {name: OS.release.ID, value: ubuntu}
    - {name: OS.release.VERSION_ID, value: "24.04"}
`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the original's snapshots", () => {
  test("validate --no-cluster reads a measurements-only snapshot: every constraint holds, exit 0", async () => {
    const r = await aicr(["validate", "--no-cluster", "-r", recipe, "-s", BARE]);
    expect(r.stderr).not.toContain("ERROR");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).results.summary).toMatchObject({ tests: 4, passed: 4, failed: 0 });
  });

  test("v0.11.1's apiVersion aicr.nvidia.com/v1alpha1 with its envelope reads the same", async () => {
    const path = join(dir, "v1alpha1.yaml");
    writeFileSync(
      path,
      `apiVersion: aicr.nvidia.com/v1alpha1
kind: Snapshot
metadata:
  timestamp: "2025-12-31T10:30:00Z"
  version: v0.11.1
  source-node: gpu-node-1
${readFileSync(BARE, "utf8")}`,
    );
    const r = await aicr(["validate", "--no-cluster", "-r", recipe, "-s", path]);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain("has no apiVersion");
    expect(JSON.parse(r.stdout).results.summary).toMatchObject({ tests: 4, passed: 4 });
  });

  test("a structurally wrong measurements-only document is still refused with its paths, exit 2", async () => {
    const r = await aicr([
      "validate",
      "--no-cluster",
      "-r",
      recipe,
      "-s",
      join(ROOT, "test/fixtures/diff/broken.yaml"),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("measurements[0].type: expected one of K8s, GPU, OS");
    expect(r.stderr).toContain("measurements[0].subtypes[0].subtype: required but missing");
  });
});

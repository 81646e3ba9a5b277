/**
 * The conformance and performance phases' flags and reports through the compiled binary, without a
 * cluster (--no-cluster) or before any request: the version-skew WARN, --cncf-submission's pre-flight
 * and directory, --nccl-image's form, plainly named phase constraints, render-rbac --recipe.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { aicr, ROOT } from "./_aicr.ts";

const SNAPSHOT = join(ROOT, "test/validate/fixtures/snapshot-h100.yaml");
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-conformance-flags-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  return path;
}

const RECIPE = [
  "kind: RecipeMetadata",
  "metadata: {version: v0.11.1}",
  "spec:",
  "  validation:",
  "    performance:",
  "      checks: [nccl-all-reduce-bw]",
  "      constraints:",
  '        - {name: nccl-all-reduce-bw, value: ">= 300"}',
  "    conformance:",
  "      checks: [dra-support, gang-scheduling, gpu-operator-health]",
  "",
].join("\n");

describe("aicr validate: conformance and performance inputs", () => {
  test("a recipe of another version: one WARN naming the recipe's, the snapshot's and this binary's versions", async () => {
    const r = await aicr(["validate", "-r", file("skew.yaml", RECIPE), "-s", SNAPSHOT, "--no-cluster"]);
    expect(r.code).toBe(0);
    const warns = r.stderr.split("\n").filter((l) => l.includes("version skew"));
    expect(warns).toHaveLength(1);
    expect(warns[0]).toContain("recipe v0.11.1, snapshot 0.1.0, aicr ");
    // the plainly named constraint is read, every check planned (and, with --no-cluster, not run)
    const ctrf = JSON.parse(r.stdout);
    expect(ctrf.results.tests.map((t: { name: string }) => t.name)).toEqual([
      "nccl-all-reduce-bw",
      "dra-support",
      "gang-scheduling",
      "gpu-operator-health",
    ]);
  });

  test("no WARN when the versions agree", async () => {
    const same = RECIPE.replace("v0.11.1", "v0.1.0");
    const r = await aicr(["validate", "-r", file("same.yaml", same), "-s", SNAPSHOT, "--no-cluster"]);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain("version skew");
  });

  test("a plainly named constraint that is no check of its phase: exit 2, naming the phase's checks", async () => {
    const bad = RECIPE.replace("name: nccl-all-reduce-bw, value", "name: nccl-allreduce-bw, value");
    const r = await aicr(["validate", "-r", file("bad.yaml", bad), "-s", SNAPSHOT, "--no-cluster"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'spec.validation.performance.constraints[0].name: "nccl-allreduce-bw" is not a performance check (its checks: nccl-all-reduce-bw)',
    );
  });

  test("--cncf-submission: an existing path or a missing parent is exit 2 before anything; a new one is made (empty without a run)", async () => {
    const recipe = file("cncf.yaml", RECIPE);
    const taken = join(dir, "taken");
    mkdirSync(taken);
    let r = await aicr([
      "validate",
      "-r",
      recipe,
      "-s",
      SNAPSHOT,
      "--no-cluster",
      "--cncf-submission",
      taken,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--cncf-submission");
    expect(r.stderr).toContain("already exists (a directory)");
    expect(r.stdout).toBe("");
    r = await aicr([
      "validate",
      "-r",
      recipe,
      "-s",
      SNAPSHOT,
      "--no-cluster",
      "--cncf-submission",
      join(dir, "no/such/dir"),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is not a directory");
    const fresh = join(dir, "evidence");
    r = await aicr(["validate", "-r", recipe, "-s", SNAPSHOT, "--no-cluster", "--cncf-submission", fresh]);
    expect(r.code).toBe(0);
    expect(statSync(fresh).isDirectory()).toBe(true);
    expect(readdirSync(fresh)).toEqual([]);
    expect(r.stderr).toContain("holds no evidence");
  });

  test("--nccl-image takes one image reference", async () => {
    const r = await aicr([
      "validate",
      "-r",
      file("n.yaml", RECIPE),
      "-s",
      SNAPSHOT,
      "--no-cluster",
      "--nccl-image",
      "a b",
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('invalid --nccl-image "a b"');
  });
});

describe("aicr render-rbac --recipe", () => {
  test("the caller's ClusterRole, the shared validator role and one file per isolated check; nothing applied", async () => {
    const out = join(dir, "rbac");
    mkdirSync(out);
    const r = await aicr(["render-rbac", "--recipe", file("rbac.yaml", RECIPE), "--dir", out, "-o", "json"]);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary.files).toEqual([
      "caller.yaml",
      "validator.yaml",
      "nccl-all-reduce-bw.yaml",
      "dra-support.yaml",
      "gang-scheduling.yaml",
      "gpu-operator-health.yaml",
    ]);
    const caller = readFileSync(join(summary.directory, "caller.yaml"), "utf8");
    expect(caller).toContain("name: aicr-validate-caller");
    expect(caller).not.toContain("cluster-admin\n");
    expect(r.stderr).toContain("NOTHING has been applied");
  });

  test("a ServiceAccount and --recipe together, or --discover-network with --recipe: exit 2, nothing written", async () => {
    const out = join(dir, "rbac2");
    mkdirSync(out);
    const recipe = file("rbac2.yaml", RECIPE);
    let r = await aicr(["render-rbac", "sa", "--recipe", recipe, "--dir", out]);
    expect(r.code).toBe(2);
    r = await aicr(["render-rbac", "--recipe", recipe, "--discover-network", "--dir", out]);
    expect(r.code).toBe(2);
    expect(readdirSync(out)).toEqual([]);
    expect(existsSync(join(out, "caller.yaml"))).toBe(false);
  });
});

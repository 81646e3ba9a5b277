/** `aicr validate --no-cluster` from the compiled binary: readiness only, reports, exit codes. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { aicr, ROOT } from "../e2e/_aicr.ts";

const SNAPSHOT = join(ROOT, "test/validate/fixtures/snapshot-h100.yaml");
const SAMPLE = join(ROOT, "examples/recipe.yaml");
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-validate-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function recipe(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  return path;
}

describe("aicr validate --no-cluster", () => {
  test("the sample recipe holds on the fixture snapshot: CTRF on stdout, checks skipped, exit 0", async () => {
    const r = await aicr(["validate", "-r", SAMPLE, "-s", SNAPSHOT, "--no-cluster"]);
    expect(r.stderr).toContain("validate run: runID=");
    expect(r.code).toBe(0);
    const ctrf = JSON.parse(r.stdout);
    expect(ctrf.reportFormat).toBe("CTRF");
    expect(ctrf.results.summary).toMatchObject({ tests: 8, passed: 5, skipped: 3, failed: 0 });
    const skipped = ctrf.results.tests.filter((t: { status: string }) => t.status === "skipped");
    expect(skipped.map((t: { message: string }) => t.message)).toEqual(
      Array(3).fill("not run: --no-cluster"),
    );
  });

  test("-o and --junit write the CTRF and JUnit reports to files; stdout stays empty", async () => {
    const out = join(dir, "report.json");
    const junit = join(dir, "report.xml");
    const r = await aicr([
      "validate",
      "-r",
      SAMPLE,
      "-s",
      SNAPSHOT,
      "--no-cluster",
      "-o",
      out,
      "--junit",
      junit,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect(JSON.parse(readFileSync(out, "utf8")).results.summary.tests).toBe(8);
    const xml = readFileSync(junit, "utf8");
    expect(xml).toContain('<testsuites name="aicr validate" tests="8" failures="0" errors="0" skipped="3"');
    expect(xml).toContain('<skipped message="not run: --no-cluster"/>');
  });

  test("a readiness failure exits 2 listing expected vs actual for each constraint", async () => {
    const path = recipe(
      "fail.yaml",
      `kind: RecipeMetadata
spec:
  constraints:
    - {name: K8s.server.version, value: ">= 1.34"}
    - {name: OS.release.ID, value: rhel}
    - {name: OS.release.VERSION_ID, value: "24.04"}
    - {name: K8s.server.versoin, value: ">= 1.30"}
`,
    );
    const r = await aicr(["validate", "-r", path, "-s", SNAPSHOT, "--no-cluster"]);
    expect(r.code).toBe(2);
    // The report still reaches stdout: CTRF by default.
    expect(JSON.parse(r.stdout).results.summary).toMatchObject({ tests: 4, passed: 1, failed: 3 });
    expect(r.stderr).toContain("[INVALID_REQUEST] readiness failed: 3 of 4 constraint(s) do not hold");
    expect(r.stderr).toContain('K8s.server.version: expected >= 1.34, actual "v1.33.4-eks-3025e55"');
    expect(r.stderr).toContain('OS.release.ID: expected rhel (exact match), actual "ubuntu"');
    expect(r.stderr).toContain(
      "K8s.server.versoin: expected >= 1.30, actual: no such reading in the snapshot; did you mean K8s.server.version?",
    );
  });

  test("a readiness failure with -o and --junit still writes both reports, then exits 2", async () => {
    const path = recipe(
      "fail-reports.yaml",
      `kind: RecipeMetadata
spec:
  constraints:
    - {name: K8s.server.version, value: ">= 1.34"}
    - {name: OS.release.ID, value: ubuntu}
    - {name: OS.release.VERSION_ID, value: "22.04"}
    - {name: K8s.server.versoin, value: ">= 1.30"}
  validation:
    deployment:
      checks: [operator-health, expected-resources]
`,
    );
    const out = join(dir, "fail-report.json");
    const junit = join(dir, "fail-report.xml");
    const base = ["validate", "-r", path, "-s", SNAPSHOT, "--no-cluster"];
    const r = await aicr([...base, "-o", out, "--junit", junit]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("[INVALID_REQUEST] readiness failed: 3 of 4 constraint(s) do not hold");
    expect(r.stderr).toContain(`report written to ${out}`);

    const ctrf = JSON.parse(readFileSync(out, "utf8"));
    expect(ctrf.results.summary).toMatchObject({ tests: 6, passed: 1, failed: 3, skipped: 2, other: 0 });
    const byName = new Map<string, Record<string, unknown>>(
      ctrf.results.tests.map((t: { name: string }) => [t.name, t]),
    );
    expect(byName.get("K8s.server.version")).toMatchObject({
      status: "failed",
      suite: ["readiness"],
      message: "expected >= 1.34, actual v1.33.4-eks-3025e55",
      extra: { expected: ">= 1.34", actual: "v1.33.4-eks-3025e55" },
    });
    expect(byName.get("OS.release.VERSION_ID")).toMatchObject({
      status: "failed",
      extra: { expected: "22.04", actual: "24.04" },
    });
    expect(byName.get("K8s.server.versoin")).toMatchObject({
      status: "failed",
      message: "no such reading in the snapshot (expected >= 1.30)",
      extra: { expected: ">= 1.30" },
    });
    expect(byName.get("K8s.server.versoin")?.extra).not.toHaveProperty("actual");
    expect(byName.get("OS.release.ID")).toMatchObject({ status: "passed" });
    for (const check of ["operator-health", "expected-resources"]) {
      expect(byName.get(check)).toMatchObject({
        status: "skipped",
        suite: ["deployment"],
        message: "not run: readiness failed",
      });
    }

    const xml = readFileSync(junit, "utf8");
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    expect(xml).toContain('<testsuites name="aicr validate" tests="6" failures="3" errors="0" skipped="2"');
    expect(xml).toContain('<testsuite name="readiness" tests="4" failures="3"');
    expect(xml).toContain(
      '<testcase name="K8s.server.version" classname="readiness" time="0.000">\n      <failure message="expected &gt;= 1.34, actual v1.33.4-eks-3025e55"/>',
    );
    expect(xml).toContain('<failure message="expected 22.04, actual 24.04"/>');
    expect(xml.match(/<failure /g)?.length).toBe(3);
    expect(xml.match(/<skipped message="not run: readiness failed"\/>/g)?.length).toBe(2);
    // Every element opened is closed: the document is well formed enough for a CI reader.
    expect(xml.match(/<testsuite /g)?.length).toBe(xml.match(/<\/testsuite>/g)?.length);

    // Without -o the same report is on stdout: the table, then the exit status.
    const t = await aicr([...base, "-t", "table"]);
    expect(t.code).toBe(2);
    expect(t.stdout).toMatch(
      /readiness\s+K8s\.server\.version\s+failed\s+0\.000s\s+expected >= 1\.34, actual v1\.33\.4/,
    );
    expect(t.stdout).toMatch(/deployment\s+operator-health\s+skipped\s+0\.000s\s+not run: readiness failed/);
    expect(t.stdout).toContain("6 checks: 1 passed, 3 failed, 2 skipped, 0 other");
  }, 30_000);

  test("--allow-missing lets an absent reading pass (reported skipped)", async () => {
    const path = recipe(
      "missing.yaml",
      "kind: RecipeMetadata\nspec:\n  constraints:\n    - {name: SystemD.kubelet.service.ActiveState, value: active}\n",
    );
    expect((await aicr(["validate", "-r", path, "-s", SNAPSHOT, "--no-cluster"])).code).toBe(2);
    const r = await aicr([
      "validate",
      "-r",
      path,
      "-s",
      SNAPSHOT,
      "--no-cluster",
      "--allow-missing",
      "-t",
      "table",
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/readiness\s+SystemD\.kubelet\.service\.ActiveState\s+skipped/);
  });

  test("a bad recipe exits 2 naming each path; no report is written", async () => {
    const path = recipe(
      "bad.yaml",
      "kind: RecipeMetadata\nspec:\n  constraints:\n    - {name: Foo.a.b, value: x}\n    - {name: OS.release.ID}\n",
    );
    const out = join(dir, "never.json");
    const r = await aicr(["validate", "-r", path, "-s", SNAPSHOT, "--no-cluster", "-o", out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`recipe "${path}" is invalid: 2 problem(s)`);
    expect(r.stderr).toContain('spec.constraints[0].name: unknown measurement type "Foo"');
    expect(r.stderr).toContain("spec.constraints[1].value: required but missing");
    expect(() => readFileSync(out)).toThrow();
  });

  test("an unknown check exits 2 before anything else; --skip-check of an undeclared check too", async () => {
    const path = recipe(
      "checks.yaml",
      "kind: RecipeMetadata\nspec:\n  validation:\n    deployment:\n      checks: [operator-health, nccl]\n",
    );
    const r = await aicr(["validate", "-r", path, "-s", SNAPSHOT, "--no-cluster"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('spec.validation.deployment.checks[1]: "nccl" is not a built-in validator');
    const s = await aicr(["validate", "-r", SAMPLE, "-s", SNAPSHOT, "--no-cluster", "--skip-check", "nope"]);
    expect(s.code).toBe(2);
    expect(s.stderr).toContain('--skip-check "nope": the recipe declares no such check');
  });

  test("bad flags exit 2 naming the flag; a missing file names the path", async () => {
    const cases: [string[], string][] = [
      [["validate", "-s", SNAPSHOT, "--no-cluster"], "missing --recipe"],
      [["validate", "-r", SAMPLE, "--no-cluster"], "--no-cluster needs --snapshot"],
      [
        ["validate", "-r", SAMPLE, "-s", SNAPSHOT, "--no-cluster", "--phase", "deploy"],
        'invalid --phase "deploy"',
      ],
      [["validate", "-r", SAMPLE, "-s", SNAPSHOT, "--no-cluster", "-t", "xml"], 'invalid --format "xml"'],
      [["validate", "-r", join(dir, "nope.yaml"), "-s", SNAPSHOT, "--no-cluster"], "no such file"],
      [["validate", "-r", "cm://Bad/x", "-s", SNAPSHOT], 'ConfigMap URI "cm://Bad/x" is invalid'],
    ];
    for (const [args, text] of cases) {
      const r = await aicr(args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toContain(text);
    }
  });
});

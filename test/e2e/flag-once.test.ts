/**
 * A single-value flag given twice is refused through the compiled binary (exit 2, "can only be given
 * once", the flag named, nothing sent), as the original refuses it; repeatable and list flags keep
 * every value, and a --config value under the flag given once is still fine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestCluster, type TestCluster } from "../cluster/testbed.ts";
import { requestsSince } from "../support/requests.ts";
import { aicr, baseEnv, type Result, ROOT } from "./_aicr.ts";

const FIX = join(ROOT, "test/fixtures/diff");
const BASE = join(FIX, "baseline.yaml");
const TARGET = join(FIX, "target.yaml");
const RECIPE = join(ROOT, "examples/recipe.yaml");

let cluster: TestCluster;
let dir: string;

beforeAll(async () => {
  cluster = await startTestCluster("fake", { controllers: false });
  dir = mkdtempSync(join(tmpdir(), "aicr-flag-once-"));
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function run(args: string[]): Promise<Result & { sent: string[] }> {
  const before = cluster.log.entries.length;
  const r = await aicr(args, { cwd: dir, env: baseEnv({ KUBECONFIG: cluster.kubeconfigFor("admin") }) });
  return { ...r, sent: requestsSince(cluster, before) };
}

describe("a single-value flag given twice", () => {
  for (const [args, flag] of [
    [["validate", "--recipe", "a.yaml", "--recipe", "b.yaml"], "--recipe"],
    [["validate", "-r", "a.yaml", "--recipe=b.yaml", "--no-cluster"], "--recipe"],
    [["snapshot", "-t", "json", "-t", "yaml"], "--format"],
    [["snapshot", "-o", "x.yaml", "-o", "y.yaml"], "--output"],
    [["diff", "-b", BASE, "--target", TARGET, "-o", "json", "-o", "yaml"], "--output"],
    [["diff", "-b", BASE, "-b", TARGET, "--target", TARGET], "--baseline"],
    [["snapshot", "-n", "a", "--namespace", "b"], "--namespace"],
    [["snapshot", "--timeout", "5m", "--timeout=5m"], "--timeout"],
  ] as const) {
    test(`aicr ${args.join(" ")}: exit 2 naming ${flag}, nothing sent`, async () => {
      const r = await run([...args]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain("can only be given once");
      expect(r.stderr).toContain(`flag ${flag} `);
      expect(r.stdout).toBe("");
      expect(r.sent).toEqual([]);
    });
  }

  test("the message says both values and how each was spelled", async () => {
    const r = await run(["snapshot", "-t", "json", "--format=yaml"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'flag --format can only be given once: got "json" (-t), then "yaml" (--format)',
    );
  });
});

describe("repeatable and list flags are unaffected", () => {
  test("diff --ignore twice: both globs apply (exit 0)", async () => {
    const r = await run([
      "diff",
      "-b",
      BASE,
      "--target",
      TARGET,
      "--ignore",
      "K8s.**",
      "--ignore",
      "OS.**",
      "-o",
      "json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { changes: { path: string }[] };
    expect(doc.changes.some((c) => c.path.startsWith("K8s.") || c.path.startsWith("OS."))).toBe(false);
  });

  test("validate --phase and --skip-check given twice are read, not refused as duplicates", async () => {
    const r = await run([
      "validate",
      "-r",
      RECIPE,
      "-s",
      BASE,
      "--no-cluster",
      "--phase",
      "deployment",
      "--phase",
      "deployment",
      "--skip-check",
      "nope-1",
      "--skip-check",
      "nope-2",
    ]);
    expect(r.stderr).not.toContain("can only be given once");
  });
});

describe("--config with the flag given once", () => {
  test("the file's format under -t once: the command line wins, no refusal", async () => {
    const file = join(dir, "aicr.yaml");
    writeFileSync(file, "apiVersion: aicr.run/v1\nkind: AICRConfig\nspec:\n  snapshot:\n    format: json\n");
    const r = await aicr(["snapshot", "--local", "--config", file, "-t", "yaml", "-o", "once.yaml"], {
      cwd: dir,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(dir, "once.yaml"), "utf8").startsWith("apiVersion:")).toBe(true);
  });
});

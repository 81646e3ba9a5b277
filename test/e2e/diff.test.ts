/** `aicr diff` from the compiled binary: two files, no cluster; exit codes, --ignore, the three outputs. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { aicr, baseEnv, ROOT } from "./_aicr.ts";

const FIX = join(ROOT, "test/fixtures/diff");
const BASE = join(FIX, "baseline.yaml");
const TARGET = join(FIX, "target.yaml");
const META = join(FIX, "metadata-only.yaml");
const BARE = join(FIX, "measurements-only.yaml");

// A kubeconfig pointing nowhere: a run with two files must never read or use it.
let dir: string;
let env: Record<string, string>;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-diff-"));
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, "this is not a kubeconfig: [");
  env = baseEnv({ KUBECONFIG: kubeconfig });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("aicr diff", () => {
  test("drift without --fail-on-drift: the full text report, exit 0, no cluster needed", async () => {
    const r = await aicr(["diff", "-b", BASE, "--target", TARGET], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`baseline: ${BASE}\ntarget:   ${TARGET}\n`);
    expect(r.stdout).toContain("K8s\n  - K8s.image.dcgm-exporter: 4.1.1\n");
    expect(r.stdout).toContain("  ~ K8s.image.gpu-operator: v25.10.1 -> v25.10.2\n");
    expect(r.stdout).toContain("  + K8s.image.node-feature-discovery: v0.17.3\n");
    expect(r.stdout).toContain('  ~ K8s.node["context.node"]: gpu-node-1 -> gpu-node-2\n');
    expect(r.stdout).toContain("NetworkTopology\n");
    expect(r.stdout).toContain("  ~ NetworkTopology.group-0.items.length: 2 -> 3\n");
    // v1.33.4 → 1.33.4 is the same version: no drift.
    expect(r.stdout).not.toContain("kubelet-version");
    expect(r.stdout).not.toContain("K8s.server.version");
    expect(r.stdout).toEndWith("drift: 9 change(s): 3 added, 1 removed, 5 modified\n");
    expect(r.stdout).not.toContain("\x1b[");
    expect(r.stderr).toBe("");
  });

  test("--fail-on-drift: the report first, then CONFLICT, exit 2", async () => {
    const r = await aicr(["diff", "--baseline", BASE, "--target", TARGET, "--fail-on-drift"], { env });
    expect(r.code).toBe(2);
    expect(r.stdout).toEndWith("drift: 9 change(s): 3 added, 1 removed, 5 modified\n");
    expect(r.stderr).toContain("[CONFLICT]");
    expect(r.stderr).toContain("remedy:");
  });

  test("metadata-only differences are no drift, even with --fail-on-drift", async () => {
    const r = await aicr(["diff", "-b", BASE, "--target", META, "--fail-on-drift"], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toEndWith("no drift: 0 changes\n");
  });

  test("--ignore (repeatable) leaves paths out of the report and the verdict", async () => {
    const r = await aicr(
      [
        "diff",
        "-b",
        BASE,
        "--target",
        TARGET,
        "--fail-on-drift",
        "--ignore",
        "K8s.**",
        "--ignore=NetworkTopology.group-0.*.*",
        "--ignore",
        "NetworkTopology.*.items[*].**",
      ],
      { env },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toEndWith("no drift: 0 changes\n");
  });

  test("-o json and -o yaml parse back to the same document; the summary counts modified readings under `modified`", async () => {
    const json = await aicr(["diff", "-b", BASE, "--target", TARGET, "-o", "json"], { env });
    const yaml = await aicr(["diff", "-b", BASE, "--target", TARGET, "-o", "yaml"], { env });
    expect(json.code).toBe(0);
    expect(yaml.code).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(parseYaml(yaml.stdout)).toEqual(doc);
    expect(doc.baselineSource).toBe(BASE);
    expect(doc.targetSource).toBe(TARGET);
    expect(doc.summary).toEqual({ added: 3, removed: 1, modified: 5, total: 9 });
    expect(yaml.stdout).toMatch(/^ {2}modified: 5$/m);
    expect(doc.summary).not.toHaveProperty("changed");
    expect(doc.changes[0]).toEqual({
      path: "K8s.image.dcgm-exporter",
      kind: "removed",
      baseline: "4.1.1",
      target: null,
    });
  });

  test("a measurements-only snapshot reads, with one WARN per document", async () => {
    const r = await aicr(["diff", "-b", BARE, "--target", BARE], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toEndWith("no drift: 0 changes\n");
    const warns = r.stderr.split("\n").filter((l) => l.includes("has no apiVersion, kind or metadata"));
    expect(warns).toHaveLength(2);
  });

  test("bad input is INVALID_REQUEST, exit 2, naming the flag or the path", async () => {
    const missing = await aicr(["diff", "--target", TARGET], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--baseline is required");

    const nofile = await aicr(["diff", "-b", join(dir, "nope.yaml"), "--target", TARGET], { env });
    expect(nofile.code).toBe(2);
    expect(nofile.stderr).toContain(`--baseline "${join(dir, "nope.yaml")}": no such file`);
    expect(nofile.stderr).toContain("no such file");

    const broken = await aicr(["diff", "-b", BASE, "--target", join(FIX, "broken.yaml")], { env });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("measurements[0].type: expected one of");
    expect(broken.stderr).toContain("measurements[0].subtypes[0].name: unknown key");
    expect(broken.stdout).toBe("");

    const format = await aicr(["diff", "-b", BASE, "--target", TARGET, "-o", "table"], { env });
    expect(format.code).toBe(2);
    expect(format.stderr).toContain("invalid --output");

    const glob = await aicr(["diff", "-b", BASE, "--target", TARGET, "--ignore="], { env });
    expect(glob.code).toBe(2);

    const uri = await aicr(["diff", "-b", "cm://Bad/x", "--target", TARGET], { env });
    expect(uri.code).toBe(2);
    expect(uri.stderr).toContain("cm://Bad/x");
  });
});

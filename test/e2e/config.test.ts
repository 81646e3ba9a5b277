/** `--config <file>` through the compiled binary: values from the file, the command line winning, refusals. */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { aicr, ROOT } from "./_aicr.ts";

let cwd: string;
beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), "aicr-config-"));
});
afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const config = (snapshot: string, name = "aicr.yaml"): string => {
  const file = join(cwd, name);
  writeFileSync(file, `apiVersion: aicr.run/v1\nkind: AICRConfig\nspec:\n  snapshot:\n${snapshot}`);
  return file;
};

describe("aicr snapshot --local --config (compiled binary)", () => {
  test("format: json in the file gives JSON", async () => {
    const file = config("    format: json\n");
    const r = await aicr(["snapshot", "--local", "--config", file], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).kind).toBe("Snapshot");
  });

  test("a boolean from the file counts as given: local: true collects this host", async () => {
    const file = config("    local: true\n    agent:\n      format: json\n    output: snap.json\n");
    const r = await aicr(["snapshot", `--config=${file}`], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect(JSON.parse(readFileSync(join(cwd, "snap.json"), "utf8")).kind).toBe("Snapshot");
  });

  test("the command line wins: -t yaml over the file's json, -o over its output", async () => {
    const file = config("    format: json\n    output: from-config.json\n");
    const r = await aicr(["snapshot", "--local", "--config", file, "-t", "yaml", "-o", "cli.yaml"], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const text = readFileSync(join(cwd, "cli.yaml"), "utf8");
    expect(text.startsWith("apiVersion:")).toBe(true);
    expect(parseSnapshot(text, "cli.yaml").kind).toBe("Snapshot");
    expect(existsSync(join(cwd, "from-config.json"))).toBe(false);
  });

  test("a value from the file is checked by the flag's own parser", async () => {
    const file = config("    format: xml\n");
    const r = await aicr(["snapshot", "--local", "--config", file], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--format");
    expect(r.stdout).toBe("");
  });

  test("a bad key exits 2 naming its path and the nearest key; nothing is collected", async () => {
    const file = config("    agent:\n      nodeSelectr:\n        a: b\n      requireGpu: maybe\n");
    const r = await aicr(["snapshot", "--local", "--config", file], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("[INVALID_REQUEST]");
    expect(r.stderr).toContain(
      'spec.snapshot.agent.nodeSelectr: unknown key for "aicr snapshot": did you mean "nodeSelector"?',
    );
    expect(r.stderr).toContain("spec.snapshot.agent.requireGpu: expected true or false");
    expect(r.stderr).toContain("examples/aicr-config.yaml");
    expect(r.stdout).toBe("");
    expect(r.stderr).not.toContain("collecting");
  });

  test("--log-json in the file is refused; on the command line it shapes the error", async () => {
    const file = config("    logJson: true\n");
    const r = await aicr(["snapshot", "--local", "--config", file, "--log-json"], { cwd });
    expect(r.code).toBe(2);
    const line = JSON.parse(r.stderr.trim().split("\n").at(-1) ?? "");
    expect(line.code).toBe("INVALID_REQUEST");
    expect(line.problems[0]).toContain("spec.snapshot.logJson: --log-json cannot be set in a config file");
  });

  test("a URL, a missing file and a directory are refused with exit 2", async () => {
    mkdirSync(join(cwd, "dir"));
    for (const [value, text] of [
      ["https://config.example.com/aicr.yaml", "a URL; aicr reads a config only from a local file"],
      ["missing.yaml", "no such file"],
      ["dir", "a directory, not a regular file"],
    ] as const) {
      const r = await aicr(["snapshot", "--local", "--config", value], { cwd });
      expect(r.code, value).toBe(2);
      expect(r.stderr).toContain(`--config ${JSON.stringify(value)}: ${text}`);
    }
  });

  test("--config is listed in both commands' help and refused by commands without it", async () => {
    for (const cmd of ["snapshot", "validate"]) {
      const r = await aicr([cmd, "--help"], { cwd });
      expect(r.stdout).toContain("--config <file>");
      expect(r.stdout).toContain(`spec.${cmd}`);
    }
    const r = await aicr(["version", "--config", "x.yaml"], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown flag "--config"');
  });
});

describe("examples/aicr-config.yaml", () => {
  test("aicr snapshot reads its snapshot section (the command line choosing the host and file)", async () => {
    const example = join(ROOT, "examples/aicr-config.yaml");
    const r = await aicr(["snapshot", "--local", "--config", example, "-o", "node.yaml"], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(parseSnapshot(readFileSync(join(cwd, "node.yaml"), "utf8"), "node.yaml").kind).toBe("Snapshot");
  });

  test("aicr validate reads its validate section: the recipe from input, a JSON report", async () => {
    cpSync(join(ROOT, "examples"), join(cwd, "examples"), { recursive: true });
    const snap = await aicr(["snapshot", "--local", "-o", "node.yaml"], { cwd });
    expect(snap.code, snap.stderr).toBe(0);
    const r = await aicr(
      [
        "validate",
        "--config",
        "examples/aicr-config.yaml",
        "-s",
        "node.yaml",
        "--no-cluster",
        "-o",
        "report.json",
        "--junit",
        "report.xml",
      ],
      { cwd },
    );
    // This host is no H100 node: readiness fails (exit 2), and is reported in the file's format.
    expect(r.stderr).not.toContain("spec.validate");
    expect(r.stderr).toContain("readiness failed");
    const report = JSON.parse(readFileSync(join(cwd, "report.json"), "utf8"));
    expect(report.reportFormat).toBe("CTRF");
    expect(existsSync(join(cwd, "validation-report.json"))).toBe(false);
    expect(existsSync(join(cwd, "validation-report.xml"))).toBe(false);
    expect(r.code).toBe(2);
  });
});

/** The binary as a kubectl plugin: linked as kubectl-aicr on PATH, `kubectl aicr …` runs it. */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { controlPlaneBinary } from "../control-plane/build.ts";
import { AICR, ensureBuilt } from "./_aicr.ts";

test("kubectl aicr version: kubectl finds kubectl-aicr on PATH and runs it (the same release's kubectl)", async () => {
  await ensureBuilt();
  const { kubectl } = await controlPlaneBinary();
  const bin = mkdtempSync(join(tmpdir(), "aicr-plugin-"));
  try {
    symlinkSync(AICR, join(bin, "kubectl-aicr"));
    const env = { PATH: `${bin}:/usr/bin:/bin`, HOME: bin, NO_COLOR: "1" };
    const plugins = Bun.spawnSync([kubectl, "plugin", "list"], { env, stdout: "pipe", stderr: "pipe" });
    expect(plugins.stdout.toString()).toContain(join(bin, "kubectl-aicr"));
    const r = Bun.spawnSync([kubectl, "aicr", "version", "-o", "json"], {
      env,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(r.exitCode, r.stderr.toString()).toBe(0);
    const info = JSON.parse(r.stdout.toString()) as { version: string; image: string };
    expect(info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(info.image).toContain("aicr");
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
}, 120_000);

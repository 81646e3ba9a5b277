import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { goProblem, HOST_PACKAGES, missingPackages } from "../../../scripts/prereqs.ts";

const SCRIPT = join(import.meta.dir, "../../../scripts/prereqs.ts");

function check(env: Record<string, string>) {
  const r = Bun.spawnSync([process.execPath, SCRIPT, "--check"], { env, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stderr: r.stderr.toString() };
}

describe("scripts/prereqs.ts (the first step of npm test)", () => {
  test("on this machine every host package is present and Go is new enough: exit 0, silent", () => {
    expect(missingPackages()).toEqual([]);
    expect(goProblem()).toBeUndefined();
    expect(check({ PATH: process.env.PATH ?? "" })).toEqual({ code: 0, stderr: "" });
  });

  test("without Go on PATH it stops with one line naming go and the remedy", () => {
    const r = check({ PATH: "/usr/bin:/bin" });
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("go is not on PATH");
    expect(lines[0]).toContain("Go ≥ 1.26");
  });

  test("every package is named once and proves itself by at least one executable", () => {
    const names = HOST_PACKAGES.map((p) => p.pkg);
    expect(new Set(names).size).toBe(names.length);
    for (const p of HOST_PACKAGES) expect(p.provides.length).toBeGreaterThan(0);
  });
});

/** scripts/prereqs.ts as a program: --check with a PATH of the test's choosing, and --list. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";

const SCRIPT = join(import.meta.dir, "../../scripts/prereqs.ts");

function check(env: Record<string, string>) {
  const r = Bun.spawnSync([process.execPath, SCRIPT, "--check"], { env, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stderr: r.stderr.toString() };
}

/** The packages it checks, as `--list` prints them. */
function hostPackages(): { pkg: string; provides: string[] }[] {
  const r = Bun.spawnSync([process.execPath, SCRIPT, "--list"], { stdout: "pipe", stderr: "pipe" });
  expect(r.exitCode).toBe(0);
  return JSON.parse(r.stdout.toString());
}

describe("scripts/prereqs.ts (the first step of npm test)", () => {
  test("on this machine every host package is present and Go is new enough: exit 0, silent", () => {
    // a missing package or an old Go would each be a line on stderr and exit 1
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
    const packages = hostPackages();
    const names = packages.map((p) => p.pkg);
    expect(new Set(names).size).toBe(names.length);
    for (const p of packages) expect(p.provides.length).toBeGreaterThan(0);
  });
});

/**
 * `--template` limits through the compiled binary (issue 25, item 3): a pipe bomb, deep parentheses
 * and a template of 52 000 actions each end at once — exit 2 naming line:column and the limit, or the
 * right output — never exit 1 (out of memory, stack overflow) nor minutes of parsing.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEMPLATE_MAX_DEPTH, TEMPLATE_MAX_VALUE } from "../../src/snapshot/_template.ts";
import { aicr, baseEnv, ROOT } from "./_aicr.ts";

const dir = mkdtempSync(join(tmpdir(), "aicr-template-limits-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cpuEnv = baseEnv({
  AICR_HOST_ROOT: join(ROOT, "test/fixtures/hosts/cpu-node"),
  NODE_NAME: "cpu-node-1",
});

function template(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("snapshot --local --template: every limit holds in the binary", () => {
  test("40 chained json pipes of the whole snapshot: exit 2 at a json's line:column, naming the value limit", async () => {
    const bomb = template("bomb.tmpl", `header\n{{ . | ${Array(40).fill("json").join(" | ")} }}\n`);
    const r = await aicr(["snapshot", "--local", "--template", bomb], { cwd: dir, env: cpuEnv });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/at line 2, column \d+: json makes a value longer than/);
    expect(r.stderr).toContain(String(TEMPLATE_MAX_VALUE));
    expect(r.stderr).not.toContain("Out of memory");
    expect(r.stdout).toBe("");
  });

  test("100 000 nested parentheses: exit 2 before anything is collected, naming line:column and the depth", async () => {
    const n = 100_000;
    const deep = template("deep.tmpl", `{{ len ${"(".repeat(n)}.${")".repeat(n)} }}`);
    const r = await aicr(["snapshot", "--local", "--template", deep], { cwd: dir, env: cpuEnv });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `line 1, column ${8 + TEMPLATE_MAX_DEPTH}: parentheses nested deeper than ${TEMPLATE_MAX_DEPTH}`,
    );
    expect(r.stderr).not.toContain("collecting");
    expect(r.stdout).toBe("");
  });

  test("52 000 actions: parsed and rendered, exit 0", async () => {
    const many = template("many.tmpl", "{{1}}".repeat(52_000));
    const r = await aicr(["snapshot", "--local", "--template", many], { cwd: dir, env: cpuEnv });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trimEnd()).toBe("1".repeat(52_000));
  });
});

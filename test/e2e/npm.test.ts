/** npm in this project says what went wrong: no project-wide silence (a failing `npm ci` used to print nothing). */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./_aicr.ts";

test("a failing npm command prints its error (the project sets no loglevel=silent)", () => {
  const npmrc = join(ROOT, ".npmrc");
  if (existsSync(npmrc)) expect(readFileSync(npmrc, "utf8")).not.toMatch(/loglevel\s*=\s*silent/);
  const r = Bun.spawnSync(["npm", "run", "no-such-script"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(r.exitCode).not.toBe(0);
  expect(r.stderr.toString()).toContain('Missing script: "no-such-script"');
}, 60_000);

/** -v as kubectl users write it: a log level (4 and above: debug detail), never the version. */
import { expect, test } from "bun:test";
import { aicr } from "./_aicr.ts";

test("-v=4, -v 4, -v4 and --v=4 log debug detail; -v=2 does not", async () => {
  for (const spelling of [["-v=4"], ["-v", "4"], ["-v4"], ["--v=4"]]) {
    const r = await aicr(["version", ...spelling]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("run context");
  }
  const quiet = await aicr(["version", "-v=2"]);
  expect(quiet.code).toBe(0);
  expect(quiet.stderr).not.toContain("run context");
});

test("a level that is not 0–10, or none at all: exit 2 before anything else", async () => {
  for (const [args, text] of [
    [["version", "-v=11"], 'invalid -v "11": expected a level from 0 to 10'],
    [["version", "-v=debug"], 'invalid -v "debug"'],
    [["version", "-v"], "flag -v needs a value"],
  ] as const) {
    const r = await aicr([...args]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(text);
    expect(r.stderr).toContain("remedy:");
    expect(r.stdout).toBe("");
  }
});

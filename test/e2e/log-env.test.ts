/**
 * AICR_DEBUG and AICR_LOG_JSON, the original's environment switches, through the compiled binary:
 * each works as its flag (for the run's log and for the final error line), takes the flag's boolean
 * spellings (empty is unset), loses to the flag as written, and any other value is exit 2 naming it.
 */
import { describe, expect, test } from "bun:test";
import { aicr, baseEnv } from "./_aicr.ts";

/** A command whose run logs lines (its run ID first) and needs no cluster: this host's snapshot. */
const LOCAL = ["snapshot", "--local"];

const jsonLines = (stderr: string) =>
  stderr
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("AICR_DEBUG", () => {
  for (const value of ["true", "1", "yes"])
    test(`AICR_DEBUG=${value} logs debug detail, as --debug does`, async () => {
      const r = await aicr(["version"], { env: baseEnv({ AICR_DEBUG: value }) });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain("run context");
    });

  for (const value of ["false", "0", "no", ""])
    test(`AICR_DEBUG=${JSON.stringify(value)} logs none`, async () => {
      const r = await aicr(["version"], { env: baseEnv({ AICR_DEBUG: value }) });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toContain("run context");
    });

  test("the flag as written wins: --no-debug over AICR_DEBUG=true, --debug over AICR_DEBUG=false", async () => {
    const off = await aicr(["version", "--no-debug"], { env: baseEnv({ AICR_DEBUG: "true" }) });
    expect(off.code, off.stderr).toBe(0);
    expect(off.stderr).not.toContain("run context");
    const on = await aicr(["version", "--debug"], { env: baseEnv({ AICR_DEBUG: "false" }) });
    expect(on.stderr).toContain("run context");
  });
});

describe("AICR_LOG_JSON", () => {
  test("AICR_LOG_JSON=true: the run's lines are JSON objects", async () => {
    const r = await aicr(LOCAL, { env: baseEnv({ AICR_LOG_JSON: "true" }) });
    expect(r.code, r.stderr).toBe(0);
    const lines = jsonLines(r.stderr);
    expect(lines[0]).toMatchObject({ level: "info", msg: expect.stringMatching(/^snapshot run: runID=/) });
  });

  test("AICR_LOG_JSON=1: the final error line is JSON with code and remedy as fields", async () => {
    const r = await aicr(["diff", "-b", "missing-a.yaml", "--target", "missing-b.yaml"], {
      env: baseEnv({ AICR_LOG_JSON: "1" }),
    });
    expect(r.code).toBe(2);
    const last = jsonLines(r.stderr).at(-1) ?? {};
    expect(last.level).toBe("error");
    expect(last.code).toBe("INVALID_REQUEST");
    expect(typeof last.remedy).toBe("string");
    // A command line refused while it is read is reported in JSON too.
    const refused = await aicr(["diff", "--bogus"], { env: baseEnv({ AICR_LOG_JSON: "1" }) });
    expect(refused.code).toBe(2);
    expect(jsonLines(refused.stderr).at(-1)).toMatchObject({ level: "error", code: "INVALID_REQUEST" });
  });

  test("AICR_LOG_JSON with AICR_DEBUG: debug detail in JSON", async () => {
    const r = await aicr(["version"], { env: baseEnv({ AICR_LOG_JSON: "yes", AICR_DEBUG: "yes" }) });
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stderr).some((l) => l.msg === "run context" && l.level === "debug")).toBe(true);
  });

  test("--no-log-json over AICR_LOG_JSON=true; AICR_LOG_JSON=0 or empty: text", async () => {
    for (const [args, value] of [
      [["--no-log-json"], "true"],
      [[], "0"],
      [[], ""],
    ] as const) {
      const r = await aicr(["diff", "-b", "missing-a.yaml", "--target", "missing-b.yaml", ...args], {
        env: baseEnv({ AICR_LOG_JSON: value }),
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("[INVALID_REQUEST]");
      expect(r.stderr.trimStart().startsWith("{")).toBe(false);
    }
  });
});

describe("a value no boolean spelling reads: exit 2 naming the variable, before anything runs", () => {
  for (const [name, value] of [
    ["AICR_DEBUG", "maybe"],
    ["AICR_DEBUG", "TRUE "],
    ["AICR_LOG_JSON", "2"],
    ["AICR_LOG_JSON", "on"],
  ] as const)
    test(`${name}=${JSON.stringify(value)}`, async () => {
      const r = await aicr(LOCAL, { env: baseEnv({ [name]: value }) });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`invalid ${name} ${JSON.stringify(value)}: expected true or false`);
      expect(r.stderr).not.toContain("runID=");
      expect(r.stdout).toBe("");
    });

  test("the flag given decides: a bad AICR_DEBUG is not read under --debug", async () => {
    const r = await aicr(["version", "--debug"], { env: baseEnv({ AICR_DEBUG: "maybe" }) });
    expect(r.code, r.stderr).toBe(0);
  });
});

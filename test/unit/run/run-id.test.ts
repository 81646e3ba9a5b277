import { describe, expect, test } from "bun:test";
import {
  generateInvocationId,
  generateRunId,
  RUN_ID_LENGTH,
  RUN_ID_PATTERN,
  resolveRunId,
  runIdProblem,
} from "../../../src/run/run-id.ts";
import { thrown } from "../../support/reject.ts";

describe("run ID", () => {
  test("has the form YYYYMMDD-HHMMSS-<16 hex> and is 32 characters", () => {
    const id = generateRunId();
    expect(id).toMatch(RUN_ID_PATTERN);
    expect(id).toHaveLength(RUN_ID_LENGTH);
  });

  test("takes its timestamp from the UTC clock, not local time", () => {
    // 23:30 UTC on Jan 31 is already Feb 1 in UTC+1 and still Jan 31 in UTC-1: only UTC gives this prefix.
    const id = generateRunId(new Date(Date.UTC(2026, 0, 31, 23, 30, 5)));
    expect(id.slice(0, 15)).toBe("20260131-233005");
  });

  test("10,000 IDs generated in the same second are all distinct", () => {
    const now = new Date(Date.UTC(2026, 10, 29, 12, 0, 0));
    const ids = new Set(Array.from({ length: 10_000 }, () => generateRunId(now)));
    expect(ids.size).toBe(10_000);
  });

  test("invocation IDs are random hex and distinct", () => {
    const ids = new Set(Array.from({ length: 1000 }, generateInvocationId));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe("run ID override", () => {
  const good = "20260821-142233-9f3a1c0b7e2d4a55";

  test("--run-id wins over AICR_RUN_ID, which wins over generation", () => {
    expect(resolveRunId({ flag: good, env: "20260101-000000-0000000000000000" })).toBe(good);
    expect(resolveRunId({ env: good })).toBe(good);
    expect(resolveRunId({})).toMatch(RUN_ID_PATTERN);
    expect(resolveRunId({ flag: "", env: "" })).toMatch(RUN_ID_PATTERN);
  });

  const malformed = [
    "a",
    "build-42",
    `${good} `,
    ` ${good}`,
    good.toUpperCase(),
    `${good}0`,
    good.slice(0, -1),
    "20260821-142233-9f3a1c0b7e2d4a5g",
    "2026082-1422330-9f3a1c0b7e2d4a55",
    "20260821_142233_9f3a1c0b7e2d4a55",
    "20260821-142233-9f3a1c0b7e2d4a55\n",
    "x".repeat(32),
    "../../etc/passwd",
  ];
  for (const value of malformed) {
    test(`rejects ${JSON.stringify(value)} from either source with INVALID_REQUEST`, () => {
      for (const source of [{ flag: value }, { env: value }]) {
        const err = thrown(() => resolveRunId(source));
        expect(err.code).toBe("INVALID_REQUEST");
        expect(err.exitCode).toBe(2);
        expect(err.message).toContain(JSON.stringify(value));
        expect(err.remedy).toContain("YYYYMMDD-HHMMSS");
      }
    });
  }
});

describe("run ID override: a date and time that exist", () => {
  const tail = "0123456789abcdef";
  test("real UTC times pass, leap days included", () => {
    for (const stamp of [
      "20260821-142233",
      "20240229-235959",
      "20000229-000000",
      "00010101-000000",
      "99991231-235959",
    ])
      expect(runIdProblem(`${stamp}-${tail}`)).toBeUndefined();
  });

  for (const stamp of [
    "99999999-999999",
    "20261301-000000",
    "20260001-000000",
    "20260100-000000",
    "20260230-120000",
    "20250229-120000",
    "21000229-120000",
    "20260431-120000",
    "20260101-240000",
    "20260101-236000",
    "20260101-235960",
  ])
    test(`refuses ${stamp}-… (no such date or time) from either source, saying so`, () => {
      const value = `${stamp}-${tail}`;
      expect(runIdProblem(value)).toBe(`${stamp} is no UTC date and time (YYYYMMDD-HHMMSS)`);
      for (const source of [{ flag: value }, { env: value }]) {
        const err = thrown(() => resolveRunId(source));
        expect(err.code).toBe("INVALID_REQUEST");
        expect(err.message).toContain(JSON.stringify(value));
        expect(err.message).toContain("is no UTC date and time");
        expect(err.remedy).toContain("a real UTC date and time");
      }
    });

  test("the form is checked first: a malformed value is reported as such", () => {
    expect(runIdProblem("build-42")).toBe("form");
    expect(thrown(() => resolveRunId({ flag: "build-42" })).message).toBe(
      'invalid run ID from --run-id: "build-42"',
    );
  });
});

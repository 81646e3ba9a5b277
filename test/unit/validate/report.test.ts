import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  buildCtrf,
  buildJunit,
  buildTable,
  type CheckResult,
  statusOfExitCode,
} from "../../../src/validate/_report.ts";
import { rawControls } from "../../support/raw-controls.ts";

const GOLDEN = join(import.meta.dir, "../../fixtures/golden/validate");

/** One of each status, plus text that needs XML escaping. */
const RESULTS: CheckResult[] = [
  {
    suite: "readiness",
    name: "K8s.server.version",
    status: "passed",
    durationMs: 0,
    message: "expected >= 1.30, actual v1.33.4",
    stdout: [],
  },
  {
    suite: "deployment",
    name: "operator-health",
    status: "passed",
    durationMs: 1250,
    message: "ClusterPolicy ready; 7 operand pod(s) Running",
    stdout: [
      "ClusterPolicy cluster-policy: state ready",
      "passed: ClusterPolicy ready; 7 operand pod(s) Running",
    ],
  },
  {
    suite: "deployment",
    name: "expected-resources",
    status: "failed",
    durationMs: 980,
    message: 'GPU node(s) advertise no allocatable nvidia.com/gpu: gpu-node-2 <"0" & none>',
    stdout: ["node gpu-node-2: allocatable nvidia.com/gpu=0"],
  },
  {
    suite: "deployment",
    name: "gpu-operator-version",
    status: "skipped",
    durationMs: 0,
    message: "withheld by --skip-check",
    stdout: [],
  },
  {
    suite: "deployment",
    name: "check-timeout",
    status: "other",
    durationMs: 300000,
    message: "timed out",
    stdout: [],
  },
];
const INPUT = { version: "0.1.0", start: 1_795_950_000_000, stop: 1_795_950_302_230, results: RESULTS };

function golden(file: string, actual: string): void {
  const path = join(GOLDEN, file);
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(path, actual);
  expect(actual).toBe(readFileSync(path, "utf8"));
}

describe("reports", () => {
  test("CTRF JSON matches the golden file", () => {
    golden("report.ctrf.json", `${JSON.stringify(buildCtrf(INPUT), null, 2)}\n`);
  });

  test("JUnit XML matches the golden file", () => {
    golden("report.junit.xml", buildJunit(INPUT));
  });

  test("the table has one row per check and a summary", () => {
    golden("report.table.txt", buildTable(RESULTS));
  });

  test("the table shows a reading's terminal escapes escaped, each row one line", () => {
    const attack = "\x1b]0;pwned\x07\x1b[2J";
    const table = buildTable([
      {
        suite: "readiness",
        name: `OS.release.ID${attack}`,
        status: "failed",
        durationMs: 0,
        message: `expected ubuntu, actual ${attack}\u202e\nsecond line`,
        stdout: [],
      },
    ]);
    expect(rawControls(table)).toEqual([]);
    expect(table).toContain(
      "OS.release.ID\\u001b]0;pwned\\u0007\\u001b[2J  failed  0.000s    expected ubuntu, actual \\u001b]0;pwned\\u0007\\u001b[2J\\u202e\n",
    );
    expect(table).not.toContain("second line");
  });

  test("JUnit: characters XML 1.0 forbids are written as \\uXXXX (well-formed, nothing lost silently)", () => {
    const xml = buildJunit({
      ...INPUT,
      results: [
        {
          suite: "readiness",
          name: "OS.release.ID\x1b",
          status: "failed",
          durationMs: 0,
          message: "actual \x1b]0;pwned\x07\x1b[2J\ufffe",
          stdout: ["a\x00b\td", "\u0085 ok"],
        },
      ],
    });
    const forbidden = (n: number) =>
      (n < 0x20 && ![0x09, 0x0a, 0x0d].includes(n)) || n === 0xfffe || n === 0xffff;
    expect([...xml].filter((c) => forbidden(c.codePointAt(0) ?? 0))).toEqual([]);
    expect(xml).toContain('name="OS.release.ID\\u001b"');
    expect(xml).toContain('<failure message="actual \\u001b]0;pwned\\u0007\\u001b[2J\\ufffe"/>');
    expect(xml).toContain("<system-out>a\\u0000b\td\n\u0085 ok</system-out>");
  });

  test("exit code → status: 0 passed, 1 failed, 2 skipped, else other", () => {
    expect([0, 1, 2, 3, 137, undefined].map(statusOfExitCode)).toEqual([
      "passed",
      "failed",
      "skipped",
      "other",
      "other",
      "other",
    ]);
  });
});

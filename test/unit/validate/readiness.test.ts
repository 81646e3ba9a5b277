import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseSnapshot } from "../../../src/snapshot/schema.ts";
import { evaluateReadiness, readinessError } from "../../../src/validate/_readiness.ts";
import { rawControls } from "../../support/raw-controls.ts";

const snapshot = parseSnapshot(
  readFileSync(join(import.meta.dir, "../../validate/fixtures/snapshot-h100.yaml"), "utf8"),
  "fixture",
);

describe("evaluateReadiness", () => {
  const constraints = [
    { name: "K8s.server.version", value: ">= 1.32.4" },
    { name: "OS.release.ID", value: "ubuntu" },
    { name: "OS.release.VERSION_ID", value: "22.04" },
    { name: "K8s.server.versoin", value: ">= 1.30" },
  ];

  test("passed, failed with expected vs actual, and missing with a suggestion", () => {
    expect(evaluateReadiness(constraints, snapshot)).toEqual([
      { name: "K8s.server.version", expected: ">= 1.32.4", actual: "v1.33.4-eks-3025e55", status: "passed" },
      { name: "OS.release.ID", expected: "ubuntu", actual: "ubuntu", status: "passed" },
      { name: "OS.release.VERSION_ID", expected: "22.04", actual: "24.04", status: "failed" },
      {
        name: "K8s.server.versoin",
        expected: ">= 1.30",
        status: "missing",
        suggestion: "K8s.server.version",
      },
    ]);
  });

  test("the error lists every blocking constraint; --allow-missing lets absent readings pass", () => {
    const results = evaluateReadiness(constraints, snapshot);
    const err = readinessError(results, false);
    expect(err?.exitCode).toBe(2);
    expect(err?.message).toContain('OS.release.VERSION_ID: expected 22.04 (exact match), actual "24.04"');
    expect(err?.message).toContain("did you mean K8s.server.version?");
    const allowed = readinessError(results, true);
    expect(allowed?.message).not.toContain("versoin");
    expect(readinessError(results.slice(0, 2), false)).toBeUndefined();
    expect(readinessError(results.slice(3), true)).toBeUndefined();
  });

  test("a reading, a name or a suggestion holding terminal escapes is quoted and escaped in the error", () => {
    const attack = "\x1b]0;pwned\x07\x1b[2J";
    const err = readinessError(
      [
        { name: "OS.release.ID", expected: "ubuntu", actual: `rhel${attack}\u009b`, status: "failed" },
        { name: `X.y.z${attack}`, expected: ">= 1", status: "missing", suggestion: "X.y.w\u202e" },
      ],
      false,
    );
    expect(rawControls(err?.message ?? "")).toEqual([]);
    expect(err?.message).toContain(
      'OS.release.ID: expected ubuntu (exact match), actual "rhel\\u001b]0;pwned\\u0007\\u001b[2J\\u009b"',
    );
    expect(err?.message).toContain(
      "X.y.z\\u001b]0;pwned\\u0007\\u001b[2J: expected >= 1, actual: no such reading in the snapshot; did you mean X.y.w\\u202e?",
    );
  });
});

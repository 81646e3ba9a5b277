import { describe, expect, test } from "bun:test";
import { compareVersions, parseVersion, sameVersion } from "../../../src/core/versions.ts";
import { evaluate, parseExpression } from "../../../src/validate/_expression.ts";

const holds = (actual: string, value: string): boolean => evaluate(actual, parseExpression(value)).holds;

describe("parseExpression", () => {
  test("reads the operator prefix in order, so >= is never >", () => {
    expect(parseExpression(">= 1.32")).toEqual({ op: ">=", operand: "1.32" });
    expect(parseExpression("<=1.2")).toEqual({ op: "<=", operand: "1.2" });
    expect(parseExpression("!= x")).toEqual({ op: "!=", operand: "x" });
    expect(parseExpression("== 3")).toEqual({ op: "==", operand: "3" });
    expect(parseExpression(">2")).toEqual({ op: ">", operand: "2" });
    expect(parseExpression(" < 2 ")).toEqual({ op: "<", operand: "2" });
    expect(parseExpression("ubuntu")).toEqual({ operand: "ubuntu" });
  });
});

describe("versions", () => {
  test("optional v, up to three numbers, a -/+ suffix kept aside", () => {
    expect(parseVersion("v1.33.4-eks-3025e55")).toEqual({ parts: [1, 33, 4], suffix: "-eks-3025e55" });
    expect(parseVersion("24.04")).toEqual({ parts: [24, 4], suffix: "" });
    expect(parseVersion("300")).toEqual({ parts: [300], suffix: "" });
    expect(parseVersion("1.2.3+build")).toEqual({ parts: [1, 2, 3], suffix: "+build" });
    expect(parseVersion("1.2.3.4")).toBeUndefined();
    expect(parseVersion("ubuntu")).toBeUndefined();
  });

  test("compared at the lower precision of the two sides", () => {
    const v = (s: string) => parseVersion(s) ?? { parts: [], suffix: "" };
    expect(compareVersions(v("1.32"), v("1.32.9"))).toBe(0);
    expect(compareVersions(v("1.33"), v("1.32.9"))).toBe(1);
    expect(compareVersions(v("1.9"), v("1.10"))).toBe(-1);
  });
});

describe("evaluate", () => {
  test("ordering operators on versions", () => {
    expect(holds("v1.33.4-eks-3025e55", ">= 1.32.4")).toBe(true);
    expect(holds("v1.33.4-eks-3025e55", ">= 1.34")).toBe(false);
    expect(holds("1.32.9", ">= 1.32")).toBe(true);
    expect(holds("1.32.9", "> 1.32")).toBe(false);
    expect(holds("6.8.0-1017-nvidia", ">= 6.8")).toBe(true);
    expect(holds("1.10", "> 1.9")).toBe(true);
    expect(holds("1000", ">= 300")).toBe(true);
    expect(holds("v24.3.0", "< v24.6.0")).toBe(true);
    expect(holds("v24.3.0", "<= v24.3")).toBe(true);
  });

  test("== and != on versions use the lower precision too", () => {
    expect(holds("1.32.9", "== 1.32")).toBe(true);
    expect(holds("1.32.9", "!= 1.33")).toBe(true);
    expect(holds("1.32.9", "!= 1.32")).toBe(false);
  });

  test("strings otherwise; a bare value is an exact string match", () => {
    expect(holds("ubuntu", "ubuntu")).toBe(true);
    expect(holds("ubuntu", "Ubuntu")).toBe(false);
    expect(holds("24.04", "24.04")).toBe(true);
    expect(holds("24.04", "24.4")).toBe(false);
    expect(holds("ubuntu", "!= rhel")).toBe(true);
    expect(holds("ubuntu", "== ubuntu")).toBe(true);
    expect(evaluate("b", parseExpression("> a"))).toEqual({ holds: true, as: "string" });
    expect(evaluate("1.2", parseExpression(">= 1.1"))).toEqual({ holds: true, as: "version" });
  });
});

describe("sameVersion (diff's equality, from the same parse)", () => {
  const v = (s: string) => parseVersion(s) ?? { parts: [], suffix: "" };
  test("a leading v and a written-out zero are the same version", () => {
    expect(sameVersion(v("v1.33.4"), v("1.33.4"))).toBe(true);
    expect(sameVersion(v("1.33"), v("1.33.0"))).toBe(true);
  });
  test("a more precise side or another suffix is a different version", () => {
    expect(sameVersion(v("1.33"), v("1.33.4"))).toBe(false);
    expect(sameVersion(v("v1.33.4-eks-1"), v("v1.33.4-eks-2"))).toBe(false);
    expect(sameVersion(v("v1.33.4-eks-1"), v("1.33.4-eks-1"))).toBe(true);
  });
  test("constraints still compare at the lower precision", () => {
    expect(evaluate("1.33.4", parseExpression("== 1.33")).holds).toBe(true);
  });
});

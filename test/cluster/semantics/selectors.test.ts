import { describe, expect, test } from "bun:test";
import {
  formatLabelSelector,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
} from "./selectors.ts";

const labels = { app: "aicr", tier: "gpu", "aicr.run/run-id": "r1", empty: "" };

describe("label selectors", () => {
  test.each([
    ["", true],
    ["app=aicr", true],
    ["app==aicr", true],
    ["app = aicr", true],
    ["app=other", false],
    ["app!=other", true],
    ["missing!=x", true],
    ["app!=aicr", false],
    ["tier in (gpu,cpu)", true],
    ["tier in (cpu)", false],
    ["missing in (a)", false],
    ["tier notin (cpu)", true],
    ["missing notin (a)", true],
    ["tier notin (gpu)", false],
    ["app", true],
    ["missing", false],
    ["!missing", true],
    ["!app", false],
    ["app=aicr,aicr.run/run-id=r1", true],
    ["app=aicr,aicr.run/run-id=r2", false],
    ["empty=", true],
    ["app,!missing,tier in (gpu)", true],
  ])("%p → %p", (s, want) => {
    expect(matchesLabels(parseLabelSelector(s), labels)).toBe(want);
  });

  test.each([
    ["app=a,"],
    ["in (a)"],
    ["app in a"],
    ["app in (a"],
    ["app=a b"],
    ["!"],
    ["app=a=b"],
    ["bad key=x"],
    ["k=-v"],
  ])("%p is a parse error", (s) => {
    expect(() => parseLabelSelector(s)).toThrow(/found '.*', expected: |Invalid value/);
  });

  test("real parser texts", () => {
    expect(() => parseLabelSelector("env IN (a)")).toThrow(
      "unable to parse requirement: found 'IN', expected: in, notin, =, ==, !=, gt, lt",
    );
    expect(() => parseLabelSelector("test-label=====name1")).toThrow(
      "unable to parse requirement: found '==', expected: identifier",
    );
    expect(() => parseLabelSelector("a=b c")).toThrow("found 'c', expected: ',' or 'end of string'");
  });

  test("gt/lt", () => {
    expect(matchesLabels(parseLabelSelector("n>3"), { n: "4" })).toBe(true);
    expect(matchesLabels(parseLabelSelector("n<3"), { n: "4" })).toBe(false);
    expect(() => parseLabelSelector("n>x")).toThrow();
  });

  test("round trip format", () => {
    const s = "a=b,c!=d,e in (f,g),!h,i";
    expect(formatLabelSelector(parseLabelSelector(s))).toBe(s);
  });
});

describe("field selectors", () => {
  const pod = {
    metadata: { name: "p", namespace: "ns" },
    spec: { nodeName: "n1" },
    status: { phase: "Running" },
  };
  const pending = { metadata: { name: "q", namespace: "ns" }, spec: {}, status: { phase: "Pending" } };

  test.each([
    ["metadata.name=p", pod, true],
    ["metadata.name==p", pod, true],
    ["metadata.name!=p", pod, false],
    ["metadata.namespace=ns,status.phase=Running", pod, true],
    ["status.phase!=Running", pending, true],
    ["spec.nodeName=", pending, true],
    ["spec.nodeName=", pod, false],
    ["spec.nodeName=n1", pod, true],
    ["", pod, true],
  ] as [string, unknown, boolean][])("%p", (s, obj, want) => {
    expect(matchesFields(parseFieldSelector(s), obj)).toBe(want);
  });

  test("unsupported field", () => {
    expect(() => parseFieldSelector("spec.foo=x")).toThrow("field label not supported: spec.foo");
    expect(() => parseFieldSelector("status.phase=x", ["metadata.name"])).toThrow(
      "field label not supported: status.phase",
    );
  });

  test("escaped comma in value", () => {
    const sel = parseFieldSelector("metadata.name=a\\,b");
    expect(sel).toEqual([{ field: "metadata.name", operator: "=", value: "a,b" }]);
  });

  test("no operator", () => {
    expect(() => parseFieldSelector("metadata.name")).toThrow(/invalid selector/);
  });
});

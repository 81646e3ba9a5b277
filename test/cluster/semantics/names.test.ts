import { describe, expect, test } from "bun:test";
import {
  validateDns1123Label,
  validateDns1123Subdomain,
  validateLabelKey,
  validateLabelValue,
} from "./names.ts";

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

describe("validateDns1123Label", () => {
  test.each([
    ["a", []],
    ["my-name", []],
    ["123-abc", []],
    ["a".repeat(63), []],
    ["a".repeat(64), ["must be no more than 63 characters"]],
    ["My-Name", [LABEL_MSG]],
    ["-a", [LABEL_MSG]],
    ["a-", [LABEL_MSG]],
    ["a.b", ["must not contain dots"]],
    ["", [LABEL_MSG]],
    ["A".repeat(64), ["must be no more than 63 characters", LABEL_MSG]],
  ] as [string, string[]][])("%p", (v, want) => {
    expect(validateDns1123Label(v)).toEqual(want);
  });
});

describe("validateDns1123Subdomain", () => {
  test.each([
    ["example.com", 0],
    ["a.b-c.d", 0],
    ["a..b", 1],
    [".a", 1],
    ["Example.com", 1],
    [`${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`, 0],
    [`${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(62)}`, 1],
  ] as [string, number][])("%p", (v, n) => {
    expect(validateDns1123Subdomain(v)).toHaveLength(n);
  });

  test("message names the subdomain regex", () => {
    expect(validateDns1123Subdomain("A")[0]).toContain(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'",
    );
    expect("x".repeat(254)).toHaveLength(254);
    expect(validateDns1123Subdomain("x".repeat(254))).toEqual(["must be no more than 253 characters"]);
  });
});

describe("validateLabelKey", () => {
  test.each([
    ["app", 0],
    ["app.kubernetes.io/name", 0],
    ["aicr.run/run-id", 0],
    ["My_Key.x", 0],
    ["a/b/c", 1],
    ["/name", 1],
    ["prefix/", 2],
    ["Bad_Prefix/name", 1],
    ["-x", 1],
    ["a".repeat(64), 1],
  ] as [string, number][])("%p", (k, n) => {
    expect(validateLabelKey(k)).toHaveLength(n);
  });

  test("messages", () => {
    expect(validateLabelKey("/name")).toEqual(["prefix part must be non-empty"]);
    expect(validateLabelKey("a".repeat(64))).toEqual(["name part must be no more than 63 bytes"]);
    expect(validateLabelKey("a/b/c")[0]).toStartWith(
      "a valid label key must consist of alphanumeric characters",
    );
    expect(validateLabelKey("x/-y")[0]).toStartWith(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc'",
    );
    expect(validateLabelKey("Bad/name")[0]).toStartWith("prefix part a lowercase RFC 1123 subdomain");
  });
});

describe("validateLabelValue", () => {
  test.each([
    ["", 0],
    ["MyValue", 0],
    ["my_value", 0],
    ["12345", 0],
    ["a".repeat(63), 0],
    ["a".repeat(64), 1],
    ["-a", 1],
    ["a b", 1],
    ["a/b", 1],
  ] as [string, number][])("%p", (v, n) => {
    expect(validateLabelValue(v)).toHaveLength(n);
  });

  test("message", () => {
    expect(validateLabelValue("-")).toEqual([
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]);
  });
});

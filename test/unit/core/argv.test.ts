import { describe, expect, test } from "bun:test";
import { repeatedFlag } from "../../../src/core/argv.ts";

const NS = ["-n", "--namespace"];

describe("repeatedFlag", () => {
  test("collects every spelling, in order (a list drops duplicates)", () => {
    const argv = [
      "cleanup-legacy",
      "-n",
      "a",
      "--namespace",
      "b",
      "-n=c",
      "--namespace=d",
      "-n",
      "a",
      "--yes",
    ];
    expect(repeatedFlag(argv, NS, { list: true })).toEqual(["a", "b", "c", "d"]);
    expect(repeatedFlag(argv, NS)).toEqual(["a", "b", "c", "d", "a"]);
  });

  test("splits comma lists and trims only when asked", () => {
    expect(repeatedFlag(["-n", "a, b", "-n", "c"], NS, { list: true })).toEqual(["a", "b", "c"]);
    expect(repeatedFlag(["--node-selector", "k=a,b"], ["--node-selector"])).toEqual(["k=a,b"]);
  });

  test("ignores other flags, look-alikes and everything after --", () => {
    expect(repeatedFlag(["--context", "x", "--names=z", "-nfoo", "--", "-n", "late"], NS)).toEqual([]);
  });

  test("a flag without its value yields an empty value, for the caller to reject", () => {
    expect(repeatedFlag(["--yes", "-n"], NS)).toEqual([""]);
    expect(repeatedFlag(["-n="], NS)).toEqual([""]);
  });

  test("none given: an empty list", () => {
    expect(repeatedFlag([], NS)).toEqual([]);
  });
});

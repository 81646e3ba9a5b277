import { describe, expect, test } from "bun:test";
import { repeatedFlag } from "../../../src/legacy/argv.ts";

const NS = ["-n", "--namespace"];

describe("repeatedFlag", () => {
  test("collects every spelling, in order, without duplicates", () => {
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
    expect(repeatedFlag(argv, NS)).toEqual(["a", "b", "c", "d"]);
  });

  test("splits comma lists and trims", () => {
    expect(repeatedFlag(["-n", "a, b", "-n", "c"], NS)).toEqual(["a", "b", "c"]);
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

/** What commands read back from their normalized argv: every value of a repeatable flag, booleans as written. */
import { describe, expect, test } from "bun:test";
import { flagValues, normalizeArgv } from "../../../src/commands/_argv.ts";
import type { FlagSpecs as ArgsDef } from "../../../src/commands/_flag-spec.ts";

const ARGS: ArgsDef = {
  namespace: { type: "string", alias: "n", repeatable: true },
  "node-selector": { type: "string" },
  context: { type: "string" },
  yes: { type: "boolean" },
};
const read = (argv: string[]) => normalizeArgv("test", argv, ARGS);

describe("flagValues over normalized argv", () => {
  test("collects every spelling, in order (a list drops duplicates)", () => {
    const argv = read(["-n", "a", "--namespace", "b", "-n=c", "--namespace=d", "-ne", "-n", "a", "--yes"]);
    expect(flagValues(argv, "namespace", { list: true })).toEqual(["a", "b", "c", "d", "e"]);
    expect(flagValues(argv, "namespace")).toEqual(["a", "b", "c", "d", "e", "a"]);
  });

  test("splits comma lists and trims only when asked", () => {
    expect(flagValues(read(["-n", "a, b", "-n", "c"]), "namespace", { list: true })).toEqual(["a", "b", "c"]);
    expect(flagValues(read(["--node-selector", "k=a,b"]), "node-selector")).toEqual(["k=a,b"]);
  });

  test("ignores other flags and everything after --", () => {
    expect(flagValues(["--context=x", "--", "--namespace=late"], "namespace")).toEqual([]);
  });

  test("an empty value, or an empty item of a list, is refused at the reading; none given: an empty list", () => {
    expect(() => read(["-n="])).toThrow('invalid -n "": an empty value');
    expect(() => read(["--node-selector", ""])).toThrow('invalid --node-selector "": an empty value');
    expect(flagValues(read([]), "namespace")).toEqual([]);
    const LIST: ArgsDef = { namespace: { type: "string", alias: "n", list: true } };
    for (const value of ["a,", ",a", "a,,b", "a, ,b"])
      expect(() => normalizeArgv("test", ["-n", value], LIST)).toThrow(
        `invalid -n ${JSON.stringify(value)}: an empty item in the comma list`,
      );
    expect(normalizeArgv("test", ["-n", "a, b"], LIST)).toEqual(["--namespace=a, b"]);
  });
});

import { expect, test } from "bun:test";
import { givenFlags, helpAsked, normalizeArgv } from "../../../src/commands/_argv.ts";
import type { FlagSpecs as ArgsDef } from "../../../src/commands/_flag-spec.ts";
import type { AicrError } from "../../../src/core/errors.ts";
import { nearest } from "../../../src/core/suggest.ts";
import { thrown } from "../../support/reject.ts";

const ARGS = {
  sa: { type: "positional" },
  namespace: { type: "string", alias: "n" },
  output: { type: "string", alias: "o" },
  timeout: { type: "string" },
  privileged: { type: "boolean" },
  quiet: { type: "boolean", alias: "q" },
} as const satisfies ArgsDef;

const refusal = (argv: string[]): AicrError => thrown(() => normalizeArgv("cmd", argv, ARGS));

test("value flags in every spelling kubectl users write become --key=value", () => {
  for (const argv of [["-n", "demo"], ["-ndemo"], ["-n=demo"], ["--namespace", "demo"], ["--namespace=demo"]])
    expect(normalizeArgv("cmd", argv, ARGS)).toEqual(["--namespace=demo"]);
  expect(normalizeArgv("cmd", ["--timeout", "-1m"], ARGS)).toEqual(["--timeout=-1m"]);
  expect(normalizeArgv("cmd", ["-o", "-"], ARGS)).toEqual(["--output=-"]);
});

test("booleans, the positional and what follows -- pass through unchanged", () => {
  expect(normalizeArgv("cmd", ["--privileged=no", "--no-privileged", "-q", "--", "-y"], ARGS)).toEqual([
    "--privileged=no",
    "--no-privileged",
    "-q",
    "--",
    "-y",
  ]);
  expect(normalizeArgv("cmd", ["sa", "--"], ARGS)).toEqual(["sa", "--"]);
});

test("-- ends the flags: the words after it count as arguments, and one too many is refused, naming --", () => {
  const e = refusal(["sa", "--", "-n", "demo"]);
  expect(e.code).toBe("INVALID_REQUEST");
  expect(e.message).toBe('unexpected argument "-n" after "--" for "aicr cmd"');
  expect(e.remedy).toContain('"--" ends the flags');
  expect(e.remedy).toContain("takes 1 argument");
  const none = thrown(() =>
    normalizeArgv("list", ["--", "--namespace", "x"], { quiet: { type: "boolean" } }),
  );
  expect(none.message).toBe('unexpected argument "--namespace" after "--" for "aicr list"');
  expect(none.remedy).toContain('"aicr list" takes no arguments');
});

test("an empty value is refused, whatever the spelling: an unset variable never means the default", () => {
  for (const argv of [["-n", ""], ["--namespace="], ["-n="], ["--namespace", ""], ["-o", ""]]) {
    const e = refusal(argv);
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.message).toMatch(/^invalid (-n|--namespace|-o) "": an empty value/);
    expect(e.remedy).toMatch(/leave (-n|--namespace|-o) out for its default/);
  }
  // A value that is only a dash or a space is a value (its own parser judges it).
  expect(normalizeArgv("cmd", ["-n", " "], ARGS)).toEqual(["--namespace= "]);
});

test("a boolean takes only true/false, 1/0, yes/no when written with =", () => {
  for (const v of ["true", "false", "1", "0", "yes", "no"])
    expect(normalizeArgv("cmd", [`--privileged=${v}`, `--no-quiet=${v}`], ARGS)).toHaveLength(2);
  for (const token of [
    "--privileged=maybe",
    "--privileged=",
    "-q=TRUE",
    "--no-privileged=on",
    "--quiet= true",
  ]) {
    const e = refusal([token]);
    expect(e.message).toMatch(
      /^invalid (--privileged|-q|--no-privileged|--quiet) ".*": expected true or false/,
    );
    expect(e.remedy).toMatch(/--(privileged|quiet) or --no-(privileged|quiet)/);
  }
});

test("a value flag with no value, or followed by another flag, is refused", () => {
  for (const argv of [["-n"], ["--output"], ["-n", "--quiet"], ["-n", "-q"], ["-o", "--"]]) {
    const e = refusal(argv);
    expect(e.code).toBe("INVALID_REQUEST");
    expect(e.message).toMatch(/^flag (-n|--output|-o) needs a value$/);
  }
});

test("a stray positional is refused, naming it", () => {
  const e = refusal(["sa", "extra"]);
  expect(e.message).toBe('unexpected argument "extra" for "aicr cmd"');
  expect(e.remedy).toContain("takes 1 argument");
});

test("an unknown flag is refused with the nearest spelling when there is one", () => {
  expect(refusal(["--outptu", "x"]).message).toBe(
    'unknown flag "--outptu" for "aicr cmd": did you mean "--output"?',
  );
  expect(refusal(["--privilegd"]).message).toContain('did you mean "--privileged"?');
  expect(refusal(["--zzzzzz"]).message).toBe('unknown flag "--zzzzzz" for "aicr cmd"');
  expect(refusal(["-x"]).message).toBe('unknown flag "-x" for "aicr cmd"');
});

test("nearest: typos within two edits, a swap counting as one", () => {
  expect(nearest("snapsht", ["snapshot", "validate"])).toBe("snapshot");
  expect(nearest("valdiate", ["snapshot", "validate"])).toBe("validate");
  expect(nearest("deploy", ["snapshot", "validate"])).toBeUndefined();
});

test("givenFlags: the declared key of every flag given, whatever its spelling; nothing after --", () => {
  const argv = normalizeArgv("cmd", ["-ndemo", "-q", "--no-privileged", "--", "--timeout"], ARGS);
  expect([...givenFlags(argv, ARGS)].sort()).toEqual(["namespace", "privileged", "quiet"]);
  expect([...givenFlags(["--privileged=no", "--output=x"], ARGS)].sort()).toEqual(["output", "privileged"]);
  expect(givenFlags([], ARGS).size).toBe(0);
});

test("helpAsked: --help or -h before --; after it, they are words", () => {
  expect(helpAsked(["snapshot", "--help"])).toBe(true);
  expect(helpAsked(["-h"])).toBe(true);
  expect(helpAsked(["render-rbac", "--", "--help"])).toBe(false);
  expect(helpAsked(["render-rbac", "--", "-h"])).toBe(false);
});

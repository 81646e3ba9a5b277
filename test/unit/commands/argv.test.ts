import { expect, test } from "bun:test";
import { givenFlags, normalizeArgv } from "../../../src/commands/_argv.ts";
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
  expect(
    normalizeArgv("cmd", ["sa", "--privileged=no", "--no-privileged", "-q", "--", "x", "-y"], ARGS),
  ).toEqual(["sa", "--privileged=no", "--no-privileged", "-q", "--", "x", "-y"]);
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
  const argv = normalizeArgv("cmd", ["sa", "-ndemo", "-q", "--no-privileged", "--", "--timeout", "1m"], ARGS);
  expect([...givenFlags(argv, ARGS)].sort()).toEqual(["namespace", "privileged", "quiet"]);
  expect([...givenFlags(["--privileged=no", "--output=x"], ARGS)].sort()).toEqual(["output", "privileged"]);
  expect(givenFlags([], ARGS).size).toBe(0);
});

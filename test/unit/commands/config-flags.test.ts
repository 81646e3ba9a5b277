/** A config section → flag values: keys looked up as own properties only; an empty string is no value. */
import { describe, expect, test } from "bun:test";
import { readArgv } from "../../../src/commands/_argv.ts";
import { applyConfigText } from "../../../src/commands/_config-file.ts";
import { CONFIG_GROUPS, configGroup, mapConfigEntries } from "../../../src/commands/_config-flags.ts";
import type { FlagSpecs } from "../../../src/commands/_flag-spec.ts";
import { thrown } from "../../support/reject.ts";

const ARGS = {
  namespace: { type: "string", alias: "n" },
  timeout: { type: "duration" },
  "node-selector": { type: "string", repeatable: true, pairs: true },
  requests: { type: "string", pairs: true },
  "image-pull-secret": { type: "string", repeatable: true },
  cleanup: { type: "boolean", default: true },
  config: { type: "string", notInConfig: "a config file cannot name another one" },
} as const satisfies FlagSpecs;

const BUILT_INS = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "isPrototypeOf"];

const doc = (section: string) =>
  `apiVersion: aicr.run/v1\nkind: AICRConfig\nspec:\n  snapshot:\n${section
    .split("\n")
    .map((l) => `    ${l}`)
    .join("\n")}\n`;

/** The refusal's problems for a section, through the same path cli.ts takes. */
const problems = (section: string): string[] => {
  const e = thrown(() =>
    applyConfigText("snapshot", readArgv("snapshot", [], ARGS).parsed, ARGS, doc(section), "c.yaml"),
  );
  expect(e.code).toBe("INVALID_REQUEST");
  return (e.context?.problems as string[] | undefined) ?? [e.message];
};

describe("keys named like JavaScript built-ins (issue 25, item 8)", () => {
  test("configGroup answers only for the groups declared", () => {
    expect(configGroup("snapshot", "agent")).toBe("any");
    expect(configGroup("validate", "input")).toEqual(["recipe", "snapshot"]);
    for (const key of BUILT_INS) {
      expect(configGroup("snapshot", key)).toBeUndefined();
      expect(configGroup(key, "agent")).toBeUndefined();
      // The records themselves have no prototype: an indexed read finds nothing either.
      expect((CONFIG_GROUPS.snapshot as Record<string, unknown>)[key]).toBeUndefined();
      expect((CONFIG_GROUPS as Record<string, unknown>)[key]).toBeUndefined();
    }
  });

  for (const key of BUILT_INS)
    test(`${key} at every level is an unknown key, never a crash or a group`, () => {
      for (const value of ["x", "{a: b}", "[a]", "true", "null", "1"]) {
        expect(problems(`${key}: ${value}`)).toEqual([
          `spec.snapshot.${key}: unknown key for "aicr snapshot"`,
        ]);
        expect(problems(`agent: {${key}: ${value}}`)).toEqual([
          `spec.snapshot.agent.${key}: unknown key for "aicr snapshot"`,
        ]);
      }
    });

  test("a built-in as a map key of a pairs flag is its text, for the flag's own check", () => {
    const entries = [
      { path: "spec.snapshot.nodeSelector", key: "nodeSelector", value: { constructor: "x" } },
    ];
    const mapped = mapConfigEntries("snapshot", entries, ARGS, new Set());
    expect(mapped.problems).toEqual([]);
    expect(mapped.values.get("node-selector")).toEqual(["constructor=x"]);
  });
});

describe("an empty string is no value (issue 25, item 10)", () => {
  test("a value flag, a list item: refused naming the path", () => {
    expect(problems('namespace: ""')).toEqual([
      "spec.snapshot.namespace: an empty string is no value (leave the key out for the flag's default)",
    ]);
    expect(problems('agent: {timeout: ""}')).toEqual([
      "spec.snapshot.agent.timeout: an empty string is no value (leave the key out for the flag's default)",
    ]);
    expect(problems('imagePullSecrets: [a, ""]')).toEqual([
      "spec.snapshot.imagePullSecrets[1]: an empty string is no value (leave the key out for the flag's default)",
    ]);
  });

  test('a map\'s value may be empty (a label value may be): role: ""', () => {
    const entries = [{ path: "spec.snapshot.nodeSelector", key: "nodeSelector", value: { role: "" } }];
    expect(mapConfigEntries("snapshot", entries, ARGS, new Set()).values.get("node-selector")).toEqual([
      "role=",
    ]);
  });
});

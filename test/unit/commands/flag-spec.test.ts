/** One declaration per flag drives the reading, the config keys, help and completion. */
import { describe, expect, test } from "bun:test";
import { globalArgs } from "../../../src/commands/_args.ts";
import { readArgv } from "../../../src/commands/_argv.ts";
import { completionFlags } from "../../../src/commands/_completion.ts";
import { applyConfigText } from "../../../src/commands/_config-file.ts";
import { configKeys } from "../../../src/commands/_config-flags.ts";
import type { FlagSpecs } from "../../../src/commands/_flag-spec.ts";
import { checkRequired, Flags, loggingOf } from "../../../src/commands/_flags.ts";
import { resolveFleetFlags } from "../../../src/commands/_fleet-flags.ts";
import { renderUsage } from "../../../src/commands/_usage.ts";
import snapshot from "../../../src/commands/snapshot.ts";
import validate from "../../../src/commands/validate.ts";
import { thrown } from "../../support/reject.ts";

const SPECS = {
  target: { type: "positional", description: "What" },
  label: { type: "string", alias: "l", repeatable: true, pairs: true, description: "k=v" },
  timeout: { type: "duration", description: "Bound" },
  format: { type: "enum", options: ["yaml", "json"], alias: "t" },
  quiet: { type: "boolean", alias: "q" },
  cleanup: { type: "boolean", default: true, negativeDescription: "Keep" },
  "no-cluster": { type: "boolean" },
  secret: { type: "string", hidden: true },
  ...globalArgs,
  namespace: { type: "string", alias: "n", list: true },
} as const satisfies FlagSpecs;

const read = (argv: string[]) => {
  const r = readArgv("demo", argv, SPECS);
  if (r.problem) throw r.problem;
  return new Flags<keyof typeof SPECS>(SPECS, r.parsed);
};

describe("one reading of argv into typed values", () => {
  test("every value of a repeatable flag in order; a list splits; any other flag once", () => {
    const f = read(["x", "-l", "a=1", "--label=b=2", "-lc=3", "-n", "a, b", "-n", "a,c", "-tjson"]);
    expect(f.list("label")).toEqual(["a=1", "b=2", "c=3"]);
    expect(f.list("namespace")).toEqual(["a", "b", "c"]);
    expect(f.string("format")).toBe("json");
    expect(f.string("target")).toBe("x");
    // A single-value flag given again, in any spelling, is refused naming it (the original refuses it too).
    const twice = thrown(() => read(["x", "-t", "yaml", "-tjson"]));
    expect(twice.code).toBe("INVALID_REQUEST");
    expect(twice.message).toBe('flag --format can only be given once: got "yaml" (-t), then "json" (-t)');
    expect(thrown(() => read(["x", "--timeout", "1m", "--timeout=2m"])).message).toContain(
      "flag --timeout can only be given once",
    );
  });

  test("booleans as written: --x, --no-x, --x=true/false, short aliases; defaults when absent", () => {
    expect(read(["x", "-q"]).bool("quiet")).toBe(true);
    expect(read(["x", "--quiet=false"]).bool("quiet")).toBe(false);
    expect(read(["x", "--quiet=true", "--no-quiet"]).bool("quiet")).toBe(false);
    expect(read(["x", "--no-cleanup"]).bool("cleanup")).toBe(false);
    expect(read(["x", "--cleanup=no"]).bool("cleanup")).toBe(false);
    expect(read(["x"]).bool("cleanup")).toBe(true);
    expect(read(["x", "--no-cluster"]).bool("no-cluster")).toBe(true);
    expect(read(["x", "--no-no-cluster"]).bool("no-cluster")).toBe(false);
    // Anything else is refused at the reading, used or not by the command (issue 25: --debug=maybe).
    for (const token of ["--quiet=maybe", "--debug=maybe", "--log-json=", "--no-cleanup=2"])
      expect(() => read(["x", token])).toThrow("expected true or false (also 1/0, yes/no)");
    // What reaches a Flags by another way (a test, the config) is still checked where it is read.
    const direct = new Flags<keyof typeof SPECS>(SPECS, {
      values: new Map([["quiet", ["maybe"]]]),
      positionals: [],
    });
    expect(direct.written("quiet")).toBe("maybe");
    expect(() => direct.bool("quiet")).toThrow('invalid --quiet "maybe": expected true or false');
  });

  test("words after -- are positionals, never flags", () => {
    const f = read(["--", "-q"]);
    expect(f.positionals).toEqual(["-q"]);
    expect(f.given("quiet")).toBe(false);
  });

  test("a refusal still hands over what could be read (the logging flags shape its report)", () => {
    const r = readArgv("demo", ["x", "--bogus", "--log-json=true", "-v=4"], SPECS);
    expect(r.problem?.message).toBe('unknown flag "--bogus" for "aicr demo"');
    expect(loggingOf(r.parsed)).toEqual({ json: true, debug: true });
  });

  test("--log-json=true, -v=4, --v 4 and --debug reach the logger; --log-json=false and -v=2 do not", () => {
    const logging = (argv: string[]) => loggingOf(readArgv("demo", ["x", ...argv], SPECS).parsed);
    expect(logging(["--log-json=true"])).toEqual({ json: true, debug: false });
    expect(logging(["--log-json", "--no-log-json"])).toEqual({ json: false, debug: false });
    expect(logging(["--log-json=false"])).toEqual({ json: false, debug: false });
    expect(logging(["-v=4"]).debug).toBe(true);
    expect(logging(["--v", "4"]).debug).toBe(true);
    expect(logging(["-v4"]).debug).toBe(true);
    expect(logging(["--debug=true"]).debug).toBe(true);
    expect(logging(["-v=2"]).debug).toBe(false);
  });

  test("a missing required positional is refused as before", () => {
    const r = readArgv("demo", [], SPECS);
    expect(() => checkRequired("demo", SPECS, r.parsed)).toThrow(
      "Missing required positional argument: TARGET",
    );
  });
});

describe("the declaration drives the config keys, help and completion", () => {
  const doc = (body: string) =>
    `apiVersion: aicr.run/v1\nkind: AICRConfig\nspec:\n  snapshot:\n    ${body}\n`;
  const merged = (specs: FlagSpecs, body: string) =>
    applyConfigText("snapshot", readArgv("snapshot", [], specs).parsed, specs, doc(body), "c.yaml");

  test("a key takes a list because the flag is repeatable, whatever its help text says", () => {
    const listed = { pull: { type: "string", repeatable: true, description: "A secret" } } as const;
    expect(merged(listed, "pulls: [a, b]").values.get("pull")).toEqual(["a", "b"]);
    const worded = { pull: { type: "string", description: "A secret (repeatable)" } } as const;
    expect(() => merged(worded, "pull: [a, b]")).toThrow("spec.snapshot.pull: expected a string or a number");
    expect(configKeys(worded).has("pulls")).toBe(false);
  });

  test("the config's values are merged as values, the command line winning", () => {
    const argv = readArgv("snapshot", ["-t", "json"], SPECS).parsed;
    const out = applyConfigText(
      "snapshot",
      argv,
      SPECS,
      doc("format: yaml\n    label: {a: b}\n    quiet: true"),
      "c",
    );
    expect(out.values.get("format")).toEqual(["json"]);
    expect(out.values.get("label")).toEqual(["a=b"]);
    expect(out.values.get("quiet")).toEqual([true]);
  });

  test("help: hint from the type or options, the env fallback named, hidden left out", () => {
    const text = renderUsage({ path: "aicr demo", description: "d", args: SPECS }, 200);
    expect(text).toContain("--timeout <duration>");
    expect(text).toContain("-t, --format <yaml|json>");
    expect(text).not.toContain("--secret");
    const snap = renderUsage({ path: "aicr snapshot", description: "d", args: snapshot.args }, 300);
    expect(snap).toMatch(/--require-gpu\s+.*\(also \$AICR_REQUIRE_GPU\)/);
    expect(snap).toMatch(
      /--timeout <duration>\s+The whole run's bound, from the permission gate to the last result/,
    );
    expect(snap).toMatch(/--node-timeout <duration>\s+--all-nodes: /);
    const val = renderUsage({ path: "aicr validate", description: "d", args: validate.args }, 300);
    expect(val).toMatch(/--timeout <duration>\s+The whole run's bound, .*the live capture and every check/);
  });

  test("completion offers the listed flags, with their first alias", () => {
    const flags = completionFlags(SPECS);
    expect(flags.find((f) => f.name === "label")).toMatchObject({ alias: "l", takesValue: true });
    expect(flags.find((f) => f.name === "secret")).toBeUndefined();
    expect(flags.some((f) => f.name === "target")).toBe(false);
  });

  test("--nodeTimeout is a config key of snapshot (the flag's camelCase)", () => {
    expect(configKeys(snapshot.args).get("nodeTimeout")?.flag).toBe("node-timeout");
  });
});

describe("--node-timeout", () => {
  const fleet = (f: { allNodes: boolean; nodeTimeout?: string }) =>
    resolveFleetFlags({ ...f, destination: { kind: "stdout" }, presentation: undefined });

  test("a fleet's per-node bound, parsed as --timeout is; none by default", () => {
    expect(fleet({ allNodes: true, nodeTimeout: "90s" })?.nodeTimeoutMs).toBe(90_000);
    expect(fleet({ allNodes: true })?.nodeTimeoutMs).toBeUndefined();
  });

  test("refused without --all-nodes, and for a bad duration", () => {
    const alone = thrown(() => fleet({ allNodes: false, nodeTimeout: "1m" }));
    expect(alone.message).toBe("--node-timeout applies only to a fleet run");
    expect(alone.remedy).toBe("add --all-nodes, or leave out --node-timeout");
    for (const [value, expected] of [
      ["5 minutes", "a duration such as 5m, 90s or 1h30m"],
      ["-1m", "a duration such as 5m, 90s or 1h30m"],
      ["0s", "a duration greater than zero"],
    ] as const)
      expect(thrown(() => fleet({ allNodes: true, nodeTimeout: value })).message).toBe(
        `invalid --node-timeout ${JSON.stringify(value)}: expected ${expected}`,
      );
  });
});

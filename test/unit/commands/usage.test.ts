import { describe, expect, test } from "bun:test";
import { globalArgs } from "../../../src/commands/_args.ts";
import type { FlagSpecs as ArgsDef } from "../../../src/commands/_flag-spec.ts";
import { exitCodeRows, renderUsage, type UsageCommand, usageWidth } from "../../../src/commands/_usage.ts";
import renderRbac from "../../../src/commands/render-rbac.ts";
import snapshot from "../../../src/commands/snapshot.ts";
import validate from "../../../src/commands/validate.ts";
import { EXIT_CODES } from "../../../src/core/errors.ts";

const args: ArgsDef = {
  target: { type: "positional", description: "What to act on" },
  output: {
    type: "string",
    alias: "o",
    valueHint: "dest",
    description: "Where the result goes: stdout (default), a file path, or cm://<namespace>/<name>",
  },
  cleanup: {
    type: "boolean",
    default: true,
    description: "Delete the run's objects when it ends (default)",
    negativeDescription: "Keep the run's objects (they are listed)",
  },
  privileged: { type: "boolean", default: true, description: "Privileged pod" },
  "job-name": { type: "string", default: "aicr", description: "Job name prefix", valueHint: "prefix" },
  secret: { type: "string", description: "An internal knob", hidden: true } as ArgsDef[string],
  "add-roles-to-service-account": {
    type: "string",
    valueHint: "value",
    description: "A flag whose label is wider than the label column, so its text goes underneath it",
  },
  ...globalArgs,
};

const cmd: UsageCommand = {
  path: "aicr demo",
  description: "A demonstration command whose description is long enough to wrap at sixty columns",
  args,
  globalArgs,
  examples: ["aicr demo thing -o cm://gpu-operator/aicr-snapshot --no-cleanup --job-name nightly-run"],
};

describe("renderUsage", () => {
  for (const width of [60, 80, 120]) {
    test(`at ${width} columns: no line wider, none with trailing spaces`, () => {
      const lines = renderUsage(cmd, width).split("\n");
      for (const line of lines) {
        expect(line.length).toBeLessThanOrEqual(width);
        expect(line).not.toMatch(/\s$/);
      }
    });
  }

  test("wraps to the width it is given, not a fixed one", () => {
    const narrow = renderUsage(cmd, 60).split("\n").length;
    const wide = renderUsage(cmd, 120).split("\n").length;
    expect(narrow).toBeGreaterThan(wide);
    expect(
      Math.max(
        ...renderUsage(cmd, 120)
          .split("\n")
          .map((l) => l.length),
      ),
    ).toBeGreaterThan(80);
  });

  test("each flag once, with its alias and value hint; the default said once", () => {
    const text = renderUsage(cmd, 200);
    expect(text.match(/--output\b/g)).toHaveLength(1);
    expect(text).toContain("-o, --output <dest>");
    // Said once: never "(default) (Default: true)", never a second "(default" on a line.
    for (const line of text.split("\n"))
      expect(line.match(/\(default/gi)?.length ?? 0).toBeLessThanOrEqual(1);
    expect(text).toMatch(/--privileged\s+Privileged pod \(default\)/);
    expect(text).toMatch(/--job-name <prefix>\s+Job name prefix \(default: aicr\)/);
  });

  test("a boolean that defaults to true, or has a negative description, gets its --no-x line", () => {
    const text = renderUsage(cmd, 120);
    expect(text).toMatch(/^\s+--no-cleanup\s+Keep the run's objects \(they are listed\)$/m);
    expect(text).toMatch(/^\s+--no-privileged$/m);
    expect(text).not.toContain("--no-output");
  });

  test("hidden flags are left out", () => {
    expect(renderUsage(cmd, 120)).not.toContain("--secret");
  });

  test("positionals, examples and the global flags under their own headings", () => {
    const text = renderUsage(cmd, 80);
    expect(text).toContain("aicr demo <TARGET> [flags]");
    expect(text).toMatch(/^Arguments:\n {2}TARGET\s+What to act on$/m);
    expect(text).toContain("\nExamples:\n  aicr demo thing -o cm://gpu-operator/aicr-snapshot");
    expect(text).toMatch(/^Global flags:$/m);
    expect(text).not.toContain("Exit codes:");
  });

  test("a label wider than the column puts its text underneath", () => {
    expect(renderUsage(cmd, 60)).toMatch(/^ {6}--add-roles-to-service-account <value>\n {8}A flag whose/m);
  });

  test("the root page ends with every exit status", () => {
    const text = renderUsage(
      {
        path: "aicr",
        description: "root",
        args: globalArgs,
        globalArgs,
        subcommands: [{ name: "demo", description: "A demo" }],
        exitCodes: true,
      },
      80,
    );
    expect(text).toMatch(/^Commands:\n {2}demo\s+A demo$/m);
    const table = text.slice(text.indexOf("Exit codes:"));
    for (const status of [0, 1, ...Object.values(EXIT_CODES)])
      expect(table).toMatch(new RegExp(`^  ${status}  `, "m"));
    for (const code of Object.keys(EXIT_CODES)) expect(table).toContain(code);
    expect(exitCodeRows().map(([s]) => s)).toEqual(["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]);
  });
});

describe("usageWidth", () => {
  test("stdout's columns, else $COLUMNS, else 80", () => {
    expect(usageWidth(132, { COLUMNS: "60" })).toBe(132);
    expect(usageWidth(undefined, { COLUMNS: "60" })).toBe(60);
    expect(usageWidth(undefined, {})).toBe(80);
    expect(usageWidth(undefined, { COLUMNS: "junk" })).toBe(80);
  });
});

describe("the commands' own definitions", () => {
  const argsOf = (c: { args?: unknown }) => c.args as ArgsDef;
  test("every boolean that defaults to true says what its --no-x does", () => {
    for (const c of [snapshot, validate, renderRbac])
      for (const [name, d] of Object.entries(argsOf(c)))
        if (d.type === "boolean" && d.default === true)
          expect({ name, negative: (d as { negativeDescription?: string }).negativeDescription }).toEqual({
            name,
            negative: expect.any(String),
          });
  });
  test("render-rbac takes neither --kubeconfig nor --context; validate says its own -n default", () => {
    expect(Object.keys(argsOf(renderRbac))).not.toContain("kubeconfig");
    expect(Object.keys(argsOf(renderRbac))).not.toContain("context");
    expect(argsOf(validate).namespace?.description).toContain("aicr-validation");
  });
});

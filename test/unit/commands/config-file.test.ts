import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { globalArgs } from "../../../src/commands/_args.ts";
import { normalizeArgv, type ParsedArgv, readArgv } from "../../../src/commands/_argv.ts";
import {
  applyConfigFile,
  applyConfigText,
  CONFIG_MAX_BYTES,
  readConfigFile,
} from "../../../src/commands/_config-file.ts";
import { configKeys } from "../../../src/commands/_config-flags.ts";
import { configArg } from "../../../src/commands/_define.ts";
import type { FlagSpecs as ArgsDef } from "../../../src/commands/_flag-spec.ts";
import snapshotCommand from "../../../src/commands/snapshot.ts";
import validateCommand from "../../../src/commands/validate.ts";
import { thrown } from "../../support/reject.ts";

/** A command shaped like snapshot's, with every kind of flag the mapping tells apart. */
const ARGS = {
  output: { type: "string", alias: "o", description: "Destination", valueHint: "dest" },
  format: { type: "string", alias: "t", description: "yaml or json", valueHint: "yaml|json" },
  "max-nodes-per-entry": { type: "string", description: "N", valueHint: "n" },
  "image-pull-secret": {
    type: "string",
    description: "Pull secret (repeatable)",
    valueHint: "name",
    repeatable: true,
  },
  "node-selector": {
    type: "string",
    description: "key=value (repeatable)",
    valueHint: "k=v",
    repeatable: true,
    pairs: true,
  },
  toleration: { type: "string", description: "taints (repeatable)", valueHint: "t", repeatable: true },
  requests: { type: "string", description: "name=quantity,…", valueHint: "list", pairs: true },
  cleanup: { type: "boolean", default: true, description: "Delete the run's objects" },
  "require-gpu": { type: "boolean", description: "Request a GPU" },
  "no-cluster": { type: "boolean", description: "Readiness only" },
  recipe: { type: "string", alias: "r", description: "Recipe", valueHint: "src" },
  ...configArg("snapshot"),
  namespace: { type: "string", alias: "n", description: "Namespace" },
  // The logging flags and --run-id as every command declares them (a config may not set them).
  debug: globalArgs.debug,
  v: globalArgs.v,
  "log-json": globalArgs["log-json"],
  "run-id": globalArgs["run-id"],
} as const satisfies ArgsDef;

const doc = (section: string, body: string) =>
  `apiVersion: aicr.run/v1\nkind: AICRConfig\nspec:\n  ${section}:\n${body
    .trim()
    .split("\n")
    .map((l) => `    ${l}`)
    .join("\n")}\n`;

/**
 * The merged values written as a command line would give them, for the assertions: the values the
 * file supplies (as `--key=value`, `--key`, `--no-key`, in the file's order), then argv's own.
 */
function asTokens(argv: readonly string[], args: ArgsDef, merged: ParsedArgv): string[] {
  const fromArgv = readArgv("test", argv, args).parsed;
  const tokens: string[] = [];
  for (const [flag, values] of merged.values) {
    if (fromArgv.values.has(flag)) continue;
    for (const v of values)
      tokens.push(v === true ? `--${flag}` : v === false ? `--no-${flag}` : `--${flag}=${v}`);
  }
  return [...tokens, ...argv];
}
const configText = (command: string, argv: string[], args: ArgsDef, text: string, file: string) =>
  asTokens(argv, args, applyConfigText(command, readArgv(command, argv, args).parsed, args, text, file));
const configFile = (command: string, argv: string[], args: ArgsDef) =>
  asTokens(argv, args, applyConfigFile(command, readArgv(command, argv, args).parsed, args));

/** The operator's argv checked, then the config's values merged under it. */
const apply = (body: string, argv: string[] = [], section = "snapshot", args: ArgsDef = ARGS) =>
  configText(section, normalizeArgv(section, argv, args), args, doc(section, body), "c.yaml");

const problemsOf = (run: () => unknown): string[] => {
  const err = thrown(run);
  expect(err.code).toBe("INVALID_REQUEST");
  expect(err.exitCode).toBe(2);
  return (err.context.problems as string[] | undefined) ?? [err.message];
};

describe("mapping a section onto flags", () => {
  test("value, repeatable, map and boolean keys become the flags' own tokens", () => {
    expect(
      apply(`
format: json
maxNodesPerEntry: 20
imagePullSecrets: [a, b]
nodeSelector:
  nvidia.com/gpu.present: true
  zone: z1
toleration: dedicated=gpu:NoSchedule
requests: {cpu: 500m, memory: 1Gi}
cleanup: false
requireGpu: true
`),
    ).toEqual([
      "--format=json",
      "--max-nodes-per-entry=20",
      "--image-pull-secret=a",
      "--image-pull-secret=b",
      "--node-selector=nvidia.com/gpu.present=true",
      "--node-selector=zone=z1",
      "--toleration=dedicated=gpu:NoSchedule",
      "--requests=cpu=500m,memory=1Gi",
      "--no-cleanup",
      "--require-gpu",
    ]);
  });

  test("a list of key=value strings for a map flag; noX and x for booleans, either way round", () => {
    expect(apply("nodeSelectors: [a=b, c=d]")).toEqual(["--node-selector=a=b", "--node-selector=c=d"]);
    expect(apply("noCleanup: true")).toEqual(["--no-cleanup"]);
    expect(apply("noCleanup: false")).toEqual(["--cleanup"]);
    expect(apply("noCluster: true")).toEqual(["--no-cluster"]);
    expect(apply("cluster: true")).toEqual(["--no-no-cluster"]);
    expect(apply("cluster: false")).toEqual(["--no-cluster"]);
    expect(apply("requests: cpu=1")).toEqual(["--requests=cpu=1"]);
    expect(apply("imagePullSecret: []")).toEqual([]);
  });

  test("the groups: agent (any flag) and validate's input (recipe, snapshot)", () => {
    expect(apply("agent:\n  timeout2: x", [], "snapshot", { ...ARGS, timeout2: { type: "string" } })).toEqual(
      ["--timeout2=x"],
    );
    expect(apply("agent:\n  namespace: ops\n  requireGpu: true")).toEqual([
      "--namespace=ops",
      "--require-gpu",
    ]);
    expect(apply("input:\n  recipe: r.yaml", [], "validate")).toEqual(["--recipe=r.yaml"]);
    expect(apply("agent:", [])).toEqual([]);
  });

  test("the other command's section, metadata and an empty section are ignored", () => {
    const text = `apiVersion: aicr.run/v1\nkind: AICRConfig\nmetadata: {name: x}\nspec:\n  snapshot:\n  validate:\n    whatever: [1]\n`;
    expect(configText("snapshot", [], ARGS, text, "c.yaml")).toEqual([]);
    expect(configText("snapshot", ["--debug"], ARGS, text, "c.yaml")).toEqual(["--debug"]);
  });

  test("JSON is read as well as YAML", () => {
    const json = JSON.stringify({
      apiVersion: "aicr.run/v1",
      kind: "AICRConfig",
      spec: { snapshot: { agent: { nodeSelector: { a: "b" } }, format: "json" } },
    });
    expect(configText("snapshot", [], ARGS, json, "c.json")).toEqual([
      "--node-selector=a=b",
      "--format=json",
    ]);
  });
});

describe("precedence: the command line wins", () => {
  test("a flag given on the command line (any spelling) is not taken from the file", () => {
    expect(apply("format: json\nnamespace: ops", ["-t", "yaml"])).toEqual([
      "--namespace=ops",
      "--format=yaml",
    ]);
    expect(apply("format: json", ["-tyaml"])).toEqual(["--format=yaml"]);
    expect(apply("cleanup: false", ["--cleanup"])).toEqual(["--cleanup"]);
    expect(apply("noCleanup: true", ["--cleanup=true"])).toEqual(["--cleanup=true"]);
    expect(apply("requireGpu: true", ["--no-require-gpu"])).toEqual(["--no-require-gpu"]);
  });

  test("a repeatable flag's command-line values replace the file's: they are not added", () => {
    expect(apply("nodeSelector: {a: b, c: d}", ["--node-selector", "x=y"])).toEqual(["--node-selector=x=y"]);
    expect(apply("imagePullSecrets: [a, b]\ntoleration: t:NoSchedule", ["--image-pull-secret", "c"])).toEqual(
      ["--toleration=t:NoSchedule", "--image-pull-secret=c"],
    );
  });

  test("a value the command line overrides is still checked", () => {
    expect(problemsOf(() => apply("format: [json]", ["-t", "yaml"]))).toEqual([
      "spec.snapshot.format: expected a string or a number",
    ]);
  });
});

describe("every problem, by its path, at once", () => {
  test("unknown keys, with the nearest known one", () => {
    expect(problemsOf(() => apply("formt: json\nagent:\n  nodeSelectr: {a: b}\n  zzzzzzzz: 1"))).toEqual([
      'spec.snapshot.formt: unknown key for "aicr snapshot": did you mean "format"?',
      'spec.snapshot.agent.nodeSelectr: unknown key for "aicr snapshot": did you mean "nodeSelector"?',
      'spec.snapshot.agent.zzzzzzzz: unknown key for "aicr snapshot"',
    ]);
    expect(problemsOf(() => apply("node-selector: {a: b}"))).toEqual([
      'spec.snapshot.node-selector: unknown key for "aicr snapshot": did you mean "nodeSelector"?',
    ]);
    expect(problemsOf(() => apply("input:\n  recipie: r.yaml\n  image: x", [], "validate"))).toEqual([
      'spec.validate.input.recipie: unknown key (input takes recipe, snapshot): did you mean "recipe"?',
      "spec.validate.input.image: unknown key (input takes recipe, snapshot)",
    ]);
  });

  test("values of the wrong type", () => {
    expect(
      problemsOf(() =>
        apply(`
format: {a: b}
requireGpu: "yes"
imagePullSecrets: [a, {b: c}]
nodeSelector: true
namespace: null
agent:
  nodeSelector:
    a: [b]
requests: [cpu=1]
`),
      ),
    ).toEqual([
      "spec.snapshot.format: expected a string or a number",
      "spec.snapshot.requireGpu: expected true or false",
      "spec.snapshot.imagePullSecrets[1]: expected a string",
      "spec.snapshot.nodeSelector: expected a map of strings (key: value) or a list of key=value strings",
      "spec.snapshot.namespace: expected a string or a number",
      "spec.snapshot.agent.nodeSelector: --node-selector is already set by spec.snapshot.nodeSelector",
      "spec.snapshot.requests: expected a map of strings (key: value) or a key=value,… string",
    ]);
    expect(problemsOf(() => apply("agent:\n  nodeSelector:\n    a: [b]"))).toEqual([
      "spec.snapshot.agent.nodeSelector.a: expected a string (a map of strings, key: value)",
    ]);
    expect(problemsOf(() => apply("agent: [a]"))).toEqual([
      "spec.snapshot.agent: expected a map of flag names to values",
    ]);
  });

  test("the same flag set twice, under two keys or two places", () => {
    expect(problemsOf(() => apply("imagePullSecret: a\nimagePullSecrets: [b]"))).toEqual([
      "spec.snapshot.imagePullSecrets: --image-pull-secret is already set by spec.snapshot.imagePullSecret",
    ]);
    expect(problemsOf(() => apply("cleanup: true\nnoCleanup: true"))).toEqual([
      "spec.snapshot.noCleanup: --cleanup is already set by spec.snapshot.cleanup",
    ]);
    expect(problemsOf(() => apply("format: json\nformat: yaml"))[0]).toContain("not valid YAML or JSON");
  });

  test("logging flags, --run-id and --config itself are refused", () => {
    const problems = problemsOf(() =>
      apply("debug: true\nv: 4\nagent:\n  logJson: true\nrunId: x\nconfig: y"),
    );
    expect(problems.map((p) => p.split(" (")[0])).toEqual([
      "spec.snapshot.debug: --debug cannot be set in a config file",
      "spec.snapshot.v: --v cannot be set in a config file",
      "spec.snapshot.agent.logJson: --log-json cannot be set in a config file",
      "spec.snapshot.runId: --run-id cannot be set in a config file",
      "spec.snapshot.config: --config cannot be set in a config file",
    ]);
    expect(problems[0]).toContain("pass --debug on the command line");
  });

  test("the envelope: apiVersion, kind, spec, unknown keys with the nearest", () => {
    const run = (text: string) => problemsOf(() => configText("snapshot", [], ARGS, text, "c.yaml"));
    expect(run("apiVersion: aicr.run/v2\nkind: Config\nspec: {}\nspek: 1\n")).toEqual([
      'apiVersion: expected "aicr.run/v1"',
      'kind: expected "AICRConfig"',
      'spek: unknown key: did you mean "spec"?',
    ]);
    expect(run("apiVersion: aicr.run/v1\nkind: AICRConfig\n")).toEqual(["spec: required but missing"]);
    expect(
      run("apiVersion: aicr.run/v1\nkind: AICRConfig\nspec:\n  snapshots: {}\n  snapshot: [1]\n"),
    ).toEqual([
      "spec.snapshot: expected a map of flag names to values",
      'spec.snapshots: unknown key: did you mean "snapshot"?',
    ]);
    // The section's own problems are told alongside the envelope's.
    expect(run("apiVersion: x\nkind: AICRConfig\nspec:\n  snapshot:\n    formt: json\n")).toEqual([
      'apiVersion: expected "aicr.run/v1"',
      'spec.snapshot.formt: unknown key for "aicr snapshot": did you mean "format"?',
    ]);
    expect(run("")[0]).toContain("(document): expected an AICRConfig document");
    expect(run("- a\n- b\n")[0]).toContain("(document): expected an AICRConfig document");
    expect(run("a: [\n")[0]).toBe(
      '--config "c.yaml": not valid YAML or JSON at line 2, column 1 (BAD_INDENT)',
    );
    expect(run("a: 1\n---\nb: 2\n")[0]).toContain("not valid YAML or JSON");
  });

  test("the message names the file and the remedy points at the example", () => {
    const err = thrown(() => apply("formt: json"));
    expect(err.message).toStartWith('config "c.yaml" is invalid: 1 problem(s):\n  spec.snapshot.formt');
    expect(err.remedy).toContain("examples/aicr-config.yaml");
    expect(err.context.flag).toBe("--config");
  });
});

describe("the file", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "aicr-config-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const refusal = (file: string): string => {
    const err = thrown(() => readConfigFile(file));
    expect(err.code).toBe("INVALID_REQUEST");
    return `${err.message} | ${err.remedy}`;
  };

  test("a regular file, or a symlink to one, is read", () => {
    const file = join(dir, "ok.yaml");
    writeFileSync(file, doc("snapshot", "format: json"));
    symlinkSync(file, join(dir, "link.yaml"));
    expect(readConfigFile(join(dir, "link.yaml"))).toBe(readFileSync(file, "utf8"));
    const argv = normalizeArgv("snapshot", ["--config", file, "-n", "x"], ARGS);
    expect(configFile("snapshot", argv, ARGS)).toEqual([
      "--format=json",
      `--config=${file}`,
      "--namespace=x",
    ]);
  });

  test("without --config argv is unchanged; --config twice is refused", () => {
    expect(configFile("snapshot", ["--namespace=x"], ARGS)).toEqual(["--namespace=x"]);
    expect(() => configFile("snapshot", ["--config=a", "--config=b"], ARGS)).toThrow(
      "--config given 2 times",
    );
  });

  test("a URL is refused, saying aicr never fetches (air-gapped hosts)", () => {
    for (const url of ["https://example.com/c.yaml", "http://10.0.0.1/c.yaml", "HTTPS://x/y", "s3://b/c"])
      expect(refusal(url)).toMatch(/a URL; aicr reads a config only from a local file \|.*air-gapped/);
  });

  test("missing, a directory, a FIFO, empty path, above 1 MiB, not UTF-8", () => {
    expect(refusal(join(dir, "nope.yaml"))).toContain("no such file");
    expect(refusal(join(dir, "nope", "x.yaml"))).toContain("no such file");
    mkdirSync(join(dir, "d"));
    expect(refusal(join(dir, "d"))).toContain("a directory, not a regular file");
    spawnSync("mkfifo", [join(dir, "fifo")]);
    expect(refusal(join(dir, "fifo"))).toContain("a named pipe, not a regular file");
    expect(refusal("")).toContain("expected a file path");
    writeFileSync(join(dir, "big.yaml"), "#".repeat(CONFIG_MAX_BYTES + 1));
    expect(refusal(join(dir, "big.yaml"))).toContain(`${CONFIG_MAX_BYTES + 1} bytes, above the 1 MiB limit`);
    writeFileSync(join(dir, "exact.yaml"), "#".repeat(CONFIG_MAX_BYTES));
    expect(readConfigFile(join(dir, "exact.yaml")).length).toBe(CONFIG_MAX_BYTES);
    writeFileSync(join(dir, "bin.yaml"), Buffer.from([0x6b, 0x3a, 0x20, 0xff, 0xfe]));
    expect(refusal(join(dir, "bin.yaml"))).toContain("not UTF-8 text");
  });

  test.skipIf(process.getuid?.() === 0)("an unreadable file is refused", () => {
    const file = join(dir, "secret.yaml");
    writeFileSync(file, "x: 1", { mode: 0o000 });
    expect(refusal(file)).toContain("not readable (permission denied)");
  });
});

describe("the real commands and examples/aicr-config.yaml", () => {
  const example = readFileSync(join(import.meta.dir, "../../../examples/aicr-config.yaml"), "utf8");

  test("--config is declared by snapshot and validate", () => {
    for (const cmd of [snapshotCommand, validateCommand])
      expect((cmd.args as ArgsDef).config?.type).toBe("string");
  });

  test("the example maps onto snapshot's flags", () => {
    const args = snapshotCommand.args as ArgsDef;
    const tokens = configText("snapshot", [], args, example, "example");
    expect(tokens).toContain("--node-selector=nvidia.com/gpu.present=true");
    expect(tokens).toContain("--toleration=nvidia.com/gpu:NoSchedule");
    expect(tokens).toContain("--requests=cpu=500m,memory=512Mi");
    expect(tokens).toContain("--namespace=gpu-operator");
    expect(tokens).toContain("--privileged");
    expect(tokens).toContain("--no-require-gpu");
    // What citty is given is what a command line in that form would be.
    expect(normalizeArgv("snapshot", tokens, args)).toEqual(tokens);
  });

  test("the example maps onto validate's flags", () => {
    const args = validateCommand.args as ArgsDef;
    const argv = normalizeArgv("validate", ["-o", "r.json"], args);
    const tokens = configText("validate", argv, args, example, "example");
    expect(tokens).toContain("--recipe=examples/recipe.yaml");
    expect(tokens).toContain("--phase=deployment");
    expect(tokens).toContain("--format=json");
    expect(tokens).not.toContain("--output=validation-report.json");
    expect(tokens.at(-1)).toBe("--output=r.json");
    expect(normalizeArgv("validate", tokens, args)).toEqual(tokens);
  });

  test("every declared flag but the refused ones is a key", () => {
    for (const cmd of [snapshotCommand, validateCommand]) {
      const keys = configKeys(cmd.args as ArgsDef);
      expect(keys.get("imagePullSecrets")?.flag).toBe("image-pull-secret");
      expect(keys.get("nodeSelector")?.flag).toBe("node-selector");
      expect(keys.get("timeout")?.flag).toBe("timeout");
    }
  });
});

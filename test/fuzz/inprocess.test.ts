/**
 * The pure readers in process, through their exported functions (no module of ours mocked): argv for
 * every command, the flag-value parsers, --config documents, kubeconfigs, templates, snapshots,
 * recipes, --ignore globs, cm:// and registry references, the provider dumps. Properties: what they
 * throw is an AicrError (anything else is exit 1, a crash, in the binary), a kubeconfig's secrets are
 * never in what they throw, each call is bounded in time, and the results keep their invariants.
 * fast-check with the fixed SEED; AICR_FUZZ_RUNS runs per property (see _harness.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { verbosity } from "../../src/commands/_args.ts";
import { readArgv } from "../../src/commands/_argv.ts";
import { applyConfigText } from "../../src/commands/_config-file.ts";
import { configKeys } from "../../src/commands/_config-flags.ts";
import { type FlagSpecs, isFlag } from "../../src/commands/_flag-spec.ts";
import { checkRequired, Flags, loggingOf } from "../../src/commands/_flags.ts";
import {
  parseBool,
  parseCount,
  parseDuration,
  parseKeyValue,
  parseResourceList,
  parseToleration,
} from "../../src/commands/_parse.ts";
import { MAX_TIMER_MS } from "../../src/core/deadline.ts";
import { AicrError } from "../../src/core/errors.ts";
import { compileGlob } from "../../src/diff/glob.ts";
import { parsePushTarget } from "../../src/image/registry/_reference.ts";
import { contextNamespace, listContexts, loadKubeConfig } from "../../src/kube/config.ts";
import { resolveRunId } from "../../src/run/run-id.ts";
import { PROVIDER_KINDS, projectProvider } from "../../src/snapshot/_providers.ts";
import { parseTemplate, renderTemplate } from "../../src/snapshot/_template.ts";
import { parseConfigMapUri } from "../../src/snapshot/cm-uri.ts";
import { parseSnapshot, type Snapshot } from "../../src/snapshot/schema.ts";
import { parseRecipe } from "../../src/validate/recipe.ts";
import { anyText, argvFor, configDocument, documentText, NASTY, nasty, yamlValue } from "./_arbitraries.ts";
import { loadCommands } from "./_commands.ts";
import { FIXTURES } from "./_file-flags.ts";
import { leaked, makeWorkspace, RUNS, SEED, type Workspace } from "./_harness.ts";
import { kubeconfigArb } from "./_kubeconfigs.ts";
import { knownFailure, loadRegressions } from "./_regressions.ts";

const regressions = loadRegressions();
let ws: Workspace;
let tried = 0;
beforeAll(() => {
  ws = makeWorkspace();
});
afterAll(() => {
  ws?.cleanup();
  process.stderr.write(`fuzz in-process: ${tried} inputs (seed ${SEED})\n`);
});

/** fast-check with the suite's seed and budget; a failure prints the seed and the shrunk input. */
function check<T>(arb: fc.Arbitrary<T>, predicate: (value: T) => void, runs = RUNS): void {
  fc.assert(
    fc.property(arb, (value) => {
      tried++;
      predicate(value);
    }),
    { seed: SEED, numRuns: runs, plugins: [fc.interruptAfterTimeLimit(60_000)] },
  );
}

/** The call returns, or throws an AicrError (anything else is a crash in the binary). */
function structured<T>(what: string, call: () => T): T | AicrError {
  try {
    return call();
  } catch (err) {
    if (err instanceof AicrError) return err;
    throw new Error(`${what} threw ${(err as Error)?.constructor?.name}: ${(err as Error)?.message}`, {
      cause: err,
    });
  }
}

/** Bounded: a call taking longer than `ms` fails the property, naming it. */
function timed<T>(what: string, ms: number, call: () => T): T {
  const start = performance.now();
  const out = call();
  const took = performance.now() - start;
  if (took > ms) throw new Error(`${what} took ${Math.round(took)} ms (bound ${ms} ms)`);
  return out;
}

/** The known failure for an in-process property: it runs as test.todo, naming its issue. */
function property(id: string, body: () => void | Promise<void>, timeoutMs = 120_000): void {
  const known = knownFailure(regressions, `inprocess: ${id}`);
  if (known) test.todo(`inprocess: ${id} — known: ${known.property}, ${known.issue}`);
  else test(`inprocess: ${id}`, body, timeoutMs);
}

const COMMANDS = await loadCommands();

describe("argv: every command's reading, then its values read through the declarations", () => {
  for (const { words, args } of COMMANDS)
    property(`aicr ${words.join(" ")}: readArgv, Flags, checkRequired`, () => {
      const ctx = { inputs: ["in.yaml", "/dev/zero"], outputs: ["out.yaml"], registry: "127.0.0.1:1" };
      check(argvFor([], args, ctx), (argv) => {
        const command = words.join(" ");
        const reading = structured("readArgv", () => readArgv(command, argv, args));
        if (reading instanceof AicrError)
          throw new Error(`readArgv threw instead of returning: ${reading.message}`);
        if (reading.problem) expect(reading.problem.code).toBe("INVALID_REQUEST");
        loggingOf(reading.parsed);
        for (const key of reading.parsed.values.keys()) expect(Object.hasOwn(args, key)).toBe(true);
        if (reading.problem) return;
        const flags = new Flags(args, reading.parsed);
        structured("checkRequired", () => checkRequired(command, args, reading.parsed));
        for (const [name, spec] of Object.entries(args)) {
          if (!isFlag(spec)) structured("Flags.string", () => flags.string(name));
          else if (spec.type === "boolean") structured("Flags.bool", () => flags.bool(name));
          else {
            const value = flags.string(name);
            // The reading refuses an empty value: none reaches a command.
            if (flags.given(name)) expect(value).not.toBe("");
            flags.list(name);
          }
        }
      });
    });
});

describe("argv: every spelling of a value flag reads the same", () => {
  property("--x v, --x=v, -a v and -a=v agree on every value flag of every command", () => {
    const cases = COMMANDS.flatMap(({ words, args }) =>
      Object.entries(args)
        .filter(([, spec]) => isFlag(spec) && spec.type !== "boolean")
        .map(([name, spec]) => ({
          command: words.join(" "),
          args,
          name,
          aliases: [spec.alias ?? []].flat(),
        })),
    );
    // A value led by a dash that names a flag is that flag (the reader says the first needs a value).
    const value = fc.oneof(nasty, anyText).filter((v) => v !== "" && !v.startsWith("-"));
    check(fc.tuple(fc.constantFrom(...cases), value), ([c, v]) => {
      const long = c.name.length === 1 ? `-${c.name}` : `--${c.name}`;
      const forms = [
        [long, v],
        [`${long}=${v}`],
        ...c.aliases.flatMap((a) => [[`-${a}`, v], [`-${a}=${v}`]]),
      ];
      // A refusal names the flag as it was written (-n or --namespace): the same refusal either way.
      const canonical = (message: string) =>
        c.aliases.reduce(
          (m, a) => m.replace(new RegExp(`(^|[\\s(])-${a}(?=[\\s="),:]|$)`, "g"), `$1${long}`),
          message,
        );
      const read = (argv: string[]) => {
        const r = readArgv(c.command, argv, c.args);
        return r.problem ? `problem: ${canonical(r.problem.message)}` : JSON.stringify([...r.parsed.values]);
      };
      const first = read(forms[0] as string[]);
      for (const f of forms) expect(read(f)).toBe(first);
    });
  });
});

describe("flag values", () => {
  const text = fc.oneof(nasty, anyText);
  property("parseDuration: a duration in (0, the longest timer], or refused", () =>
    check(
      fc.oneof(
        text,
        fc.tuple(fc.nat(10_000), fc.constantFrom("ms", "s", "m", "h", "")).map(([n, u]) => `${n}${u}`),
      ),
      (v) => {
        const ms = structured("parseDuration", () => parseDuration("--timeout", v));
        if (typeof ms === "number") {
          expect(ms).toBeGreaterThan(0);
          expect(ms).toBeLessThanOrEqual(MAX_TIMER_MS);
        }
      },
    ),
  );
  property(
    "parseKeyValue, parseToleration, parseResourceList, parseCount, parseBool, verbosity, run IDs",
    () =>
      check(text, (v) => {
        structured("parseKeyValue", () => parseKeyValue("--node-selector", v));
        structured("parseToleration", () => parseToleration("--toleration", v));
        const list = structured("parseResourceList", () => parseResourceList("--requests", v));
        if (!(list instanceof AicrError))
          for (const key of Object.keys(list)) expect(key in Object.prototype).toBe(false);
        structured("parseCount", () => parseCount("--max-nodes", v));
        structured("parseBool", () => parseBool("--privileged", v, true));
        structured("verbosity", () => verbosity(v));
        structured("resolveRunId", () => resolveRunId({ flag: v }));
      }),
  );
});

describe("--config documents", () => {
  for (const command of ["snapshot", "validate"])
    property(`aicr ${command} --config: every problem by its path, never a crash`, () => {
      const cmd = COMMANDS.find((c) => c.words[0] === command);
      const args = cmd?.args as FlagSpecs;
      const keys = [...configKeys(args).keys(), "agent", "input"];
      check(documentText(configDocument(command, keys)), (textDoc) => {
        const parsed = readArgv(command, [], args).parsed;
        const out = structured("applyConfigText", () =>
          timed("applyConfigText", 2_000, () => applyConfigText(command, parsed, args, textDoc, "fuzz.yaml")),
        );
        if (out instanceof AicrError) return;
        for (const key of out.values.keys()) {
          const spec = args[key];
          expect(spec && isFlag(spec) && spec.notInConfig === undefined).toBe(true);
        }
      });
    });
});

describe("kubeconfigs", () => {
  property("loadKubeConfig, listContexts, contextNamespace: refused without a secret, never a crash", () => {
    const file = join(ws.dir, "fuzz.kubeconfig");
    // No FIFO here: a synchronous open of one would block this process (the binary suite has it).
    const tokenFiles = {
      "dev-zero": ws.input("dev-zero"),
      "big-4MiB": ws.input("big-4MiB"),
      directory: ws.input("directory"),
      "proc-file": ws.input("proc-file"),
    };
    const skip = (id: string) => knownFailure(regressions, id) !== undefined;
    check(kubeconfigArb("127.0.0.1:1", ws.secrets, ws.certData, tokenFiles, skip), (text) => {
      writeFileSync(file, text);
      const source = { kubeconfig: file, env: {} };
      const calls: [string, () => unknown][] = [
        ["loadKubeConfig", () => loadKubeConfig(source)],
        ["listContexts", () => listContexts(source)],
        ["contextNamespace", () => contextNamespace(source)],
      ];
      for (const [what, call] of calls) {
        const out = structured(what, () => timed(what, 2_000, call));
        if (out instanceof AicrError) {
          const shown = [out.message, out.remedy ?? "", JSON.stringify(out.context ?? {})].join("\n");
          expect(leaked(shown, ws.secrets)).toEqual([]);
        }
      }
    });
  });
});

describe("documents: snapshots, recipes, provider dumps", () => {
  const snapshotLike = fc.oneof(
    yamlValue,
    fc.record(
      {
        apiVersion: fc.oneof(
          fc.constantFrom("aicr.run/v1", "aicr.nvidia.com/v1alpha1", "aicr.run/v1alpha2"),
          nasty,
        ),
        kind: fc.oneof(fc.constant("Snapshot"), nasty),
        metadata: fc.dictionary(
          fc.oneof(nasty, fc.string({ maxLength: 6 })),
          fc.oneof(nasty, fc.integer(), yamlValue),
          { maxKeys: 3 },
        ),
        measurements: fc.array(
          fc.record(
            {
              type: fc.oneof(
                fc.constantFrom("K8s", "GPU", "OS", "SystemD", "NodeTopology", "NetworkTopology"),
                nasty,
              ),
              subtypes: fc.oneof(
                fc.array(
                  fc.record(
                    {
                      subtype: fc.oneof(nasty, fc.string({ maxLength: 6 })),
                      data: fc.dictionary(
                        fc.oneof(nasty, fc.string({ maxLength: 6 })),
                        fc.oneof(nasty, fc.integer(), fc.boolean(), yamlValue),
                        { maxKeys: 4 },
                      ),
                      context: fc.dictionary(nasty, nasty, { maxKeys: 2 }),
                      items: fc.array(yamlValue, { maxLength: 2 }),
                    },
                    { requiredKeys: ["subtype"] },
                  ),
                  { maxLength: 3 },
                ),
                fc.constant(null),
              ),
            },
            { requiredKeys: [] },
          ),
          { maxLength: 3 },
        ),
      },
      { requiredKeys: [] },
    ),
  );
  property("parseSnapshot (strict and native): a snapshot or refused with paths", () =>
    check(documentText(snapshotLike), (t) => {
      for (const native of [false, true])
        structured("parseSnapshot", () =>
          timed("parseSnapshot", 2_000, () => parseSnapshot(t, "fuzz.yaml", { native })),
        );
    }),
  );
  property("parseRecipe: a recipe or refused with paths", () => {
    const recipeLike = fc.record(
      {
        kind: fc.oneof(fc.constant("RecipeMetadata"), nasty),
        apiVersion: fc.oneof(fc.constant("aicr.run/v1"), nasty),
        metadata: yamlValue,
        spec: fc.record(
          {
            constraints: fc.oneof(
              fc.array(
                fc.record(
                  {
                    name: fc.oneof(nasty, fc.constant("K8s.server.version")),
                    value: fc.oneof(nasty, fc.constant(">= 1.30")),
                  },
                  { requiredKeys: [] },
                ),
                { maxLength: 3 },
              ),
              yamlValue,
            ),
            validation: yamlValue,
          },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    );
    check(documentText(fc.oneof(recipeLike, yamlValue)), (t) => {
      structured("parseRecipe", () => timed("parseRecipe", 2_000, () => parseRecipe(t, "fuzz.yaml")));
    });
  });
  property("projectProvider: every kind, any JSON or text", () =>
    check(
      fc.tuple(fc.constantFrom(...PROVIDER_KINDS), fc.oneof(documentText(yamlValue), anyText)),
      ([kind, content]) => {
        structured("projectProvider", () =>
          timed("projectProvider", 2_000, () => projectProvider(kind, content, "dump.json")),
        );
      },
    ),
  );
});

describe("templates", () => {
  let doc: Snapshot;
  beforeAll(() => {
    doc = parseSnapshot(readFileSync(FIXTURES.snapshot, "utf8"), "baseline.yaml");
  });
  const piece = fc.oneof(
    fc.constantFrom(
      "{{ .metadata.source-node }}",
      '{{ reading "GPU.smi.gpu-count" }}',
      "{{ range .measurements }}",
      "{{ range $k, $v := .metadata }}",
      "{{ if .metadata }}",
      "{{ else }}",
      "{{ else if eq 1 1 }}",
      "{{ end }}",
      "{{ . | json }}",
      "{{ $ | json | json }}",
      '{{ join "," .measurements }}',
      "{{ len . }}",
      "{{ index . 0 }}",
      "{{ (((((.))))) }}",
      "{{- ",
      " -}}",
      "{{/* c */}}",
      "{{",
      "}}",
      '{{ upper (lower "x") }}',
      '{{ default "n/a" .nope }}',
      "{{ and 1 (or 0 nil) }}",
      "{{ $x := 1 }}",
      '{{ printf "%s" 1 }}',
      '{{ "unterminated }}',
      "{{ 1e309 }}",
      "{{ .__proto__.constructor }}",
      "{{ .constructor }}",
    ),
    nasty,
    anyText,
  );
  property("parseTemplate and renderTemplate: output or refused at line:column, bounded", () =>
    check(fc.array(piece, { maxLength: 12 }), (pieces) => {
      const text = pieces.join("");
      const tpl = structured("parseTemplate", () =>
        timed("parseTemplate", 2_000, () => parseTemplate(text, "fuzz.tmpl")),
      );
      if (tpl instanceof AicrError) return;
      structured("renderTemplate", () => timed("renderTemplate", 5_000, () => renderTemplate(tpl, doc)));
    }),
  );
});

describe("references and globs", () => {
  property(
    "parseConfigMapUri, parsePushTarget: parsed or refused; a password in a reference is never echoed",
    () =>
      check(
        fc.oneof(
          nasty,
          anyText,
          fc
            .tuple(
              fc.constantFrom("cm://", "", "https://", "oci://"),
              anyText,
              fc.constantFrom("/", "@", ":"),
              anyText,
            )
            .map((p) => p.join("")),
          fc
            .constantFrom(`fuzz:${"x"}@registry.example/x`)
            .map(() => `fuzz:${ws.secrets.password}@registry.example/x`),
          fc
            .constant(`https://fuzz:${"p"}@host/x`)
            .map(() => `https://fuzz:${ws.secrets.password}@host:5000/x`),
        ),
        (v) => {
          structured("parseConfigMapUri", () => parseConfigMapUri(v));
          const target = structured("parsePushTarget", () => parsePushTarget(v));
          if (target instanceof AicrError) {
            const shown = [target.message, target.remedy ?? "", JSON.stringify(target.context ?? {})].join(
              "\n",
            );
            expect(leaked(shown, ws.secrets)).toEqual([]);
          }
        },
      ),
  );
  property("compileGlob: a pattern or refused; matching any path is bounded", () =>
    check(
      fc.tuple(
        fc
          .array(fc.constantFrom("*", "**", ".", "a", "[", "]", "\\", "K8s", "x"), { maxLength: 14 })
          .map((p) => p.join("")),
        fc.array(fc.constantFrom("a", ".", "b", "["), { maxLength: 40 }).map((p) => p.join("")),
      ),
      ([pattern, path]) => {
        const re = structured("compileGlob", () => compileGlob(pattern));
        if (re instanceof AicrError) return;
        timed(`${re} on ${JSON.stringify(path)}`, 1_000, () => re.test(path));
      },
    ),
  );
});

test("the hostile strings are all distinct (a duplicate wastes runs)", () => {
  expect(new Set(NASTY).size).toBe(NASTY.length);
});

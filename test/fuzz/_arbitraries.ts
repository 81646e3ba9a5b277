/**
 * fast-check generators: hostile strings, values by the kind of flag, whole command lines from a
 * command's declared flags (every spelling the reader takes: --x v, --x=v, -x v, -xv, --no-x,
 * --x=<word>, words, `--`, unknown flags), AICR_* environments, kubeconfigs and config documents.
 *
 * Nothing generated may touch the world outside the run's temporary directory: values of flags that
 * write are relative names or hostile paths aicr must refuse; a registry is only the counting server
 * or an address that refuses at once; no absolute path outside the workspace and no `..` reach a
 * writing flag.
 */
import fc from "fast-check";
import { stringify } from "yaml";
import type { FlagSpec, FlagSpecs } from "../../src/commands/_flag-spec.ts";

/** Strings that have broken parsers somewhere (JavaScript built-ins, escapes, units, separators, …). */
export const NASTY = [
  "",
  " ",
  "-",
  "--",
  "=",
  "==",
  ",",
  "0",
  "-1",
  "1e309",
  "NaN",
  "Infinity",
  "9007199254740993",
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "true",
  "false",
  "maybe",
  "yes",
  "cm://",
  "cm://ns/",
  "cm:///x",
  "cm://fuzz-ns/a",
  "cm://UPPER/a",
  "a=b",
  "a=b,c=d",
  "a=",
  "=b",
  "a=b=c",
  "nvidia.com/gpu=1",
  "k:NoSchedule",
  "k=v:NoExecute",
  "k=v:Bogus",
  "5m",
  "596h",
  "597h",
  "0s",
  "1ms",
  "1.5h",
  "99999999999999999999h",
  "-1m",
  "1h1h1h",
  "x".repeat(300),
  "a".repeat(64),
  "\u001b[2J\u001b]0;owned\u0007",
  "\r\n",
  "\t",
  "ü",
  "\ud800",
  "\u202e",
  "a,b,,c",
  "{{",
  "{{ .metadata }}",
  "*",
  "**",
  "[",
  "\\",
  "'\"",
  "%s%n",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell-looking value, on purpose
  "${HOME}",
  "$(id)",
  "`id`",
  "20261202-120000-0123456789abcdef",
  "99999999-999999-0123456789abcdef",
  "20260230-120000-0123456789abcdef",
  "json",
  "yaml",
  "table",
  "text",
  "deployment",
  "all",
  "bash",
  "fish",
];

/** Arguments cannot carry NUL (the kernel ends a string there). */
const noNul = (s: string) => s.replaceAll("\0", "");

export const nasty = fc.constantFrom(...NASTY);

/** Any short text: printable, unicode, or raw code units (lone surrogates included). */
export const anyText = fc
  .oneof(
    fc.string({ maxLength: 24 }),
    fc.string({ maxLength: 12, unit: "grapheme" }),
    fc.string({ maxLength: 12, unit: "binary" }),
  )
  .map(noNul);

/** A value that a writing flag may get: relative names (in the run's cwd) and refusable paths. */
export function safeOutput(hostile: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      "out.yaml",
      "out.json",
      "report.xml",
      "out/",
      "sub/dir/out.yaml",
      ".",
      "-",
      "",
      "cm://fuzz-ns/out",
    ),
    fc.constantFrom(...hostile),
    fc.stringMatching(/^[a-z][a-z0-9._-]{0,12}$/),
  );
}

/** Any text made harmless for a flag that might write: no absolute path, no `..`. */
const tame = (s: string): string => s.replaceAll("..", "__").replace(/^\/+/, "");

/** What the generators draw paths and addresses from. */
export interface ArgvContext {
  /** Files a reading flag may name (hostile kinds, fixtures). */
  inputs: readonly string[];
  /** Hostile paths a writing flag may name (each one aicr must refuse). */
  outputs: readonly string[];
  /** The only registry a command line may name: the counting server's host:port. */
  registry: string;
  /** A secret to hide in references (user:<secret>@registry): it must never be echoed. */
  secret?: string;
}

/** Values by what a flag takes: its declared type first, then its name. */
export function valueFor(name: string, spec: FlagSpec, ctx: ArgvContext, command = ""): fc.Arbitrary<string> {
  const writes = ["output", "junit", "dir"].includes(name) && spec.type !== "enum";
  // image save with a usable -o writes a 56 MiB archive (3 s): the file suite covers its -o.
  if (writes && command === "image save") return fc.constantFrom(".", ...ctx.outputs);
  if (writes) return safeOutput(ctx.outputs);
  const generic = fc.oneof({ weight: 3, arbitrary: nasty }, { weight: 2, arbitrary: anyText.map(tame) });
  const options = spec.type === "enum" && spec.options?.length ? fc.constantFrom(...spec.options) : undefined;
  if (spec.type === "duration")
    return fc.oneof(
      fc.tuple(fc.nat(1000), fc.constantFrom("ms", "s", "m", "h", "d", "")).map(([n, u]) => `${n}${u}`),
      fc.constantFrom("2s", "1ms", "596h", "597h", "0s", "1h30m", "5m"),
      generic,
    );
  if (options) return fc.oneof({ weight: 3, arbitrary: options }, { weight: 1, arbitrary: generic });
  const byName: Record<string, fc.Arbitrary<string>> = {
    kubeconfig: fc.constantFrom(...ctx.inputs),
    config: fc.constantFrom(...ctx.inputs),
    template: fc.constantFrom(...ctx.inputs),
    recipe: fc.constantFrom(...ctx.inputs),
    snapshot: fc.constantFrom(...ctx.inputs),
    baseline: fc.oneof(fc.constantFrom(...ctx.inputs), fc.constantFrom("cm://fuzz-ns/a", "cm://x")),
    target: fc.oneof(fc.constantFrom(...ctx.inputs), fc.constantFrom("cm://fuzz-ns/b")),
    fleet: fc.constantFrom(...ctx.inputs),
    "oke-addons": fc.constantFrom(...ctx.inputs),
    "aks-gpu-pools": fc.constantFrom(...ctx.inputs),
    "gke-gpu-pools": fc.constantFrom(...ctx.inputs),
    "cluster-config": fc.constantFrom(...ctx.inputs),
    "ca-file": fc.constantFrom(...ctx.inputs),
    "run-id": fc.oneof(
      fc.constantFrom(
        "20261202-120000-0123456789abcdef",
        "99999999-999999-0123456789abcdef",
        "20260229-000000-0123456789abcdef",
      ),
      fc.stringMatching(/^[0-9]{8}-[0-9]{6}-[0-9a-f]{16}$/),
      generic,
    ),
    v: fc.oneof(fc.integer({ min: -2, max: 12 }).map(String), generic),
    "node-selector": fc.oneof(
      fc
        .tuple(fc.stringMatching(/^[a-z0-9./_-]{0,20}$/), fc.stringMatching(/^[a-zA-Z0-9._-]{0,10}$/))
        .map(([k, v]) => `${k}=${v}`),
      generic,
    ),
    toleration: fc.oneof(
      fc
        .tuple(
          fc.stringMatching(/^[a-z0-9./_-]{0,16}$/),
          fc.option(fc.string({ maxLength: 6 })),
          fc.constantFrom("NoSchedule", "NoExecute", "PreferNoSchedule", "x", ""),
        )
        .map(([k, v, e]) => (v === null ? `${k}:${e}` : `${k}=${noNul(v)}:${e}`)),
      generic,
    ),
    requests: fc.oneof(
      fc
        .array(
          fc.tuple(
            fc.constantFrom(
              "cpu",
              "memory",
              "ephemeral-storage",
              "nvidia.com/gpu",
              "constructor",
              "toString",
              "hugepages-2Mi",
              "x",
            ),
            fc.constantFrom("1", "2Gi", "500m", "-1", "1e3", "x", ""),
          ),
          { maxLength: 4 },
        )
        .map((pairs) => pairs.map(([n, q]) => `${n}=${q}`).join(",")),
      generic,
    ),
    "mount-from": fc.oneof(fc.constantFrom(`${ctx.registry}/other`, "other/repo", ""), generic),
    username: fc.oneof(fc.constantFrom("fuzz", ""), generic),
    namespace: fc.oneof(fc.stringMatching(/^[a-z0-9-]{1,20}$/), generic),
  };
  byName.limits = byName.requests as fc.Arbitrary<string>;
  return byName[name] ?? generic;
}

/** A value a careful user would give the flag (so the run gets past the reading, deeper). */
export function plausibleFor(name: string, spec: FlagSpec, ctx: ArgvContext): fc.Arbitrary<string> {
  if (spec.type === "enum" && spec.options?.length) return fc.constantFrom(...spec.options);
  if (spec.type === "duration") return fc.constantFrom("2s", "5s", "1m", "500ms");
  const byName: Record<string, readonly string[]> = {
    output: ["out.yaml", "out/", "cm://fuzz-ns/out"],
    junit: ["report.xml"],
    dir: ["."],
    kubeconfig: ctx.inputs.filter((p) => p.includes("kubeconfig")),
    context: ["fuzz", "cert", "missing-context"],
    namespace: ["fuzz-ns", "default", "a,b"],
    "run-id": ["20261202-120000-0123456789abcdef"],
    v: ["0", "2", "4", "9"],
    image: ["ghcr.io/nvidia/aicr:fake", `registry.local:5000/aicr@sha256:${"a".repeat(64)}`],
    "image-pull-secret": ["pull-secret"],
    "job-name": ["fuzz"],
    "service-account-name": ["fuzz-sa"],
    "add-roles-to-service-account": ["fuzz-sa"],
    "node-selector": ["nvidia.com/gpu.present=true", "kubernetes.io/hostname=node-1"],
    toleration: ["nvidia.com/gpu:NoSchedule", "k=v:NoExecute"],
    template: ctx.inputs.filter((p) => p.endsWith(".tmpl")),
    recipe: ctx.inputs.filter((p) => p.endsWith("recipe.yaml")),
    snapshot: ctx.inputs.filter((p) => p.endsWith("baseline.yaml")),
    baseline: [...ctx.inputs.filter((p) => p.endsWith("baseline.yaml")), "cm://fuzz-ns/golden"],
    target: ctx.inputs.filter((p) => p.endsWith("target.yaml")),
    fleet: ctx.inputs.filter((p) => p.endsWith(".yaml")),
    phase: ["deployment", "all"],
    "skip-check": ["operator-health", "nccl-all-reduce-bw"],
    ignore: ["K8s.image.**", "**.items.length"],
    "max-nodes-per-entry": ["0", "3"],
    parallelism: ["1", "4"],
    "max-nodes": ["10"],
    sample: ["2"],
    os: ["ubuntu", "talos"],
    "runtime-class": ["nvidia"],
    requests: ["cpu=1,memory=1Gi"],
    limits: ["nvidia.com/gpu=1"],
    username: ["fuzz"],
    "mount-from": [`${ctx.registry}/other`],
  };
  const choices = byName[name] ?? [];
  return choices.length ? fc.constantFrom(...choices) : valueFor(name, spec, ctx);
}

/** The positionals of a command, constrained where a value could reach the network. */
export function positionalFor(
  command: string,
  name: string,
  ctx: { inputs: readonly string[]; registry: string; secret?: string },
): fc.Arbitrary<string> {
  if ((command === "image push" || command === "image sign") && name === "archive")
    return fc.constantFrom(...ctx.inputs);
  if (command === "image push" && name === "destination")
    return fc.constantFrom(
      `${ctx.registry}/fuzz/aicr:1`,
      `${ctx.registry}/fuzz/aicr@sha256:${"0".repeat(64)}`,
      `fuzz:${ctx.secret ?? "pass"}@${ctx.registry}/fuzz/aicr`,
      `https://fuzz:${ctx.secret ?? "pass"}@${ctx.registry}/fuzz/aicr`,
      "127.0.0.1:1/fuzz/aicr",
      "UPPER/case",
      "",
      "cm://x",
      "127.0.0.1:99999/x",
      "[::1/x",
    );
  if (command === "runs delete")
    return fc.oneof(
      fc.constantFrom("20261202-120000-0123456789abcdef", "99999999-999999-0123456789abcdef"),
      fc.stringMatching(/^[0-9]{8}-[0-9]{6}-[0-9a-f]{16}$/),
      nasty,
    );
  if (command === "completion") return fc.oneof(fc.constantFrom("bash", "zsh", "fish"), nasty);
  return fc.oneof(fc.stringMatching(/^[a-z0-9.-]{1,20}$/), nasty, anyText.map(tame));
}

const BOOLEAN_WORDS = ["true", "false", "1", "0", "yes", "no", "", "maybe", "TRUE", "on"];

/** One piece of a command line: a flag in one of its spellings, a word, `--`, or an unknown flag. */
function tokenFor(command: string, args: FlagSpecs, ctx: ArgvContext): fc.Arbitrary<string[]> {
  const flags = Object.entries(args).filter(([, s]) => s.type !== "positional");
  const positionals = Object.entries(args).filter(([, s]) => s.type === "positional");
  // One arbitrary per flag, built once (a chain would build them again for every value drawn).
  const perFlag = flags.map(([name, spec]): fc.Arbitrary<string[]> => {
    const aliases = [spec.alias ?? []].flat();
    const long = `${name.length === 1 ? "-" : "--"}${name}`;
    if (spec.type === "boolean")
      return fc.oneof(
        fc.constant<string[]>([long]),
        fc.constant<string[]>([`--no-${name}`]),
        fc.constantFrom(...BOOLEAN_WORDS).map((w) => [`${long}=${w}`]),
        ...aliases.map((a) => fc.constant<string[]>([`-${a}`])),
      );
    const value = valueFor(name, spec, ctx, command);
    return fc.oneof(
      value.map((v) => [long, v]),
      value.map((v) => [`${long}=${v}`]),
      ...aliases.map((a) => value.map((v) => [`-${a}`, v])),
      ...aliases.map((a) => value.filter((v) => v !== "").map((v) => [`-${a}${v}`])),
      // no value at all: the reader must say it needs one
      fc.constant<string[]>([long]),
    );
  });
  const flag = perFlag.length ? fc.oneof(...perFlag) : fc.constant<string[]>([]);
  const word = positionals.length
    ? fc.oneof(...positionals.map(([name]) => positionalFor(command, name, ctx).map((w) => [w])))
    : anyText.map((w) => [tame(w)]);
  return fc.oneof(
    { weight: 8, arbitrary: flag },
    { weight: 2, arbitrary: word },
    { weight: 1, arbitrary: fc.constant<string[]>(["--"]) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom("--bogus", "-Z", "--__proto__", "--constructor", "--toString=1", "---x", "-")
        .map((t) => [t]),
    },
  );
}

/**
 * A whole command line for `words` (the command), from its declared flags: half of them careful
 * (the positionals, a few flags with plausible values and one hostile token at most), so runs get
 * past the reading to the files, the kubeconfig and the servers; half of them anything the token
 * generator makes.
 */
export function argvFor(words: readonly string[], args: FlagSpecs, ctx: ArgvContext): fc.Arbitrary<string[]> {
  const command = words.join(" ");
  const entries = Object.entries(args);
  const positionals = entries.filter(([, s]) => s.type === "positional");
  const flags = entries.filter(([, s]) => s.type !== "positional");
  const needed = fc.tuple(...positionals.map(([name]) => positionalFor(command, name, ctx)));
  const hostile = fc
    .tuple(
      fc.boolean(),
      positionals.length ? needed : fc.constant([] as string[]),
      fc.array(tokenFor(command, args, ctx), { maxLength: 7 }),
    )
    .map(([withPositionals, pos, tokens]) => [...words, ...(withPositionals ? pos : []), ...tokens.flat()]);
  const carefulFor = ([name, spec]: [string, FlagSpec]): fc.Arbitrary<string[]> => {
    const long = `${name.length === 1 ? "-" : "--"}${name}`;
    if (spec.type === "boolean")
      return fc.constantFrom<string[]>([long], [`--no-${name}`], [`${long}=true`], [`${long}=false`]);
    // image save with a usable -o writes a 56 MiB archive (3 s): the file suite covers its -o.
    if (command === "image save" && name === "output") return fc.constant<string[]>([long, "."]);
    return plausibleFor(name, spec, ctx).map((v) => [long, v]);
  };
  const careful = flags.map(carefulFor);
  const required = flags.filter(([, spec]) => spec.type !== "boolean" && "required" in spec && spec.required);
  const fixture = (suffix: string) => ctx.inputs.find((p) => p.endsWith(suffix)) ?? suffix;
  // What a command cannot run without, though its declaration does not say so (its own check does).
  const essential: Record<string, fc.Arbitrary<string[]>> = {
    validate: fc.constantFrom(
      ["-r", fixture("recipe.yaml")],
      ["-r", fixture("recipe.yaml"), "-s", fixture("baseline.yaml"), "--no-cluster"],
      ["-r", fixture("recipe.yaml"), "-s", fixture("baseline.yaml")],
    ),
    diff: fc.constantFrom(
      ["-b", fixture("baseline.yaml"), "--target", fixture("target.yaml")],
      ["-b", "cm://fuzz-ns/golden", "--target", fixture("target.yaml")],
      ["--fleet", fixture("baseline.yaml")],
    ),
  };
  const plausible = fc
    .tuple(
      positionals.length ? needed : fc.constant([] as string[]),
      fc.tuple(...required.map(carefulFor), essential[command] ?? fc.constant<string[]>([])),
      careful.length ? fc.array(fc.oneof(...careful), { maxLength: 4 }) : fc.constant([] as string[][]),
      // one hostile token a quarter of the time
      fc.oneof(
        { weight: 3, arbitrary: fc.constant<string[]>([]) },
        { weight: 1, arbitrary: tokenFor(command, args, ctx) },
      ),
    )
    .map(([pos, needs, chosen, odd]) => [...words, ...pos, ...needs.flat(), ...chosen.flat(), ...odd]);
  return fc.oneof(plausible, hostile);
}

/** The logging flags a run may add: its secrets must stay out of debug and JSON output too. */
export const LOGGING = [
  ["--debug"],
  ["-v=9"],
  ["--log-json"],
  ["--log-json", "--debug"],
  ["-v", "4", "--log-json"],
];

/** AICR_* variables a run may have: none most of the time (a bad one refuses every command line). */
export const envArb: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc
      .record(
        {
          AICR_NAMESPACE: fc.oneof(fc.constantFrom("fuzz-env", ""), nasty),
          AICR_RUN_ID: fc.oneof(fc.constantFrom("20261202-120000-0123456789abcdef", "bad"), nasty),
          AICR_IMAGE: fc.oneof(fc.constantFrom("ghcr.io/x/y:1", ""), nasty),
          AICR_REQUIRE_GPU: fc.constantFrom(...BOOLEAN_WORDS),
          AICR_OS: fc.oneof(fc.constantFrom("ubuntu", "talos", ""), nasty),
          AICR_PROGRESS_INTERVAL_MS: fc.constantFrom("1", "0", "-5", "x", "100"),
        },
        { requiredKeys: [] },
      )
      .map((env) => Object.fromEntries(Object.entries(env).map(([k, v]) => [k, noNul(v)]))),
  },
);

// ---------------------------------------------------------------------------------------------
// Documents.

/** A YAML value: scalars of every type, nested maps and lists, keys from NASTY. */
export const yamlValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    nasty,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    tie("list"),
    tie("map"),
  ),
  list: fc.array(tie("value"), { maxLength: 4 }),
  map: fc.dictionary(fc.oneof(nasty, fc.string({ maxLength: 8 })), tie("value"), { maxKeys: 5 }),
})).value;

/** Text made from a document: as YAML or JSON, then maybe cut, or a line garbled. */
export function documentText(doc: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc
    .tuple(
      doc,
      fc.constantFrom("yaml", "json"),
      fc.nat(),
      fc.constantFrom("none", "cut", "quote", "tab", "dup"),
    )
    .map(([value, form, at, damage]) => {
      let text =
        form === "json"
          ? (JSON.stringify(value) ?? "null")
          : stringify(value, { aliasDuplicateObjects: false });
      const i = text.length ? at % text.length : 0;
      if (damage === "cut") text = text.slice(0, i);
      if (damage === "quote") text = `${text.slice(0, i)}"${text.slice(i)}`;
      if (damage === "tab") text = `${text.slice(0, i)}\t${text.slice(i)}`;
      if (damage === "dup") text = `${text}\n${text}`;
      return text;
    });
}

/** An AICRConfig document for `command`: known keys with random values, unknown and built-in keys. */
export function configDocument(command: string, keys: readonly string[]): fc.Arbitrary<unknown> {
  const key = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: nasty });
  const section = fc.dictionary(key, yamlValue, { maxKeys: 6 });
  return fc.record(
    {
      apiVersion: fc.oneof(fc.constant("aicr.run/v1"), nasty),
      kind: fc.oneof(fc.constant("AICRConfig"), nasty),
      metadata: fc.dictionary(nasty, yamlValue, { maxKeys: 2 }),
      spec: fc.record(
        {
          [command]: fc.oneof(
            section,
            fc.record({ agent: section }),
            fc.record({ input: section }),
            yamlValue,
          ),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  );
}

/**
 * The one reader of argv. cli.ts finds the command words with commandIndex; then readArgv reads the
 * command's argv once, strictly: every flag known (with the nearest spelling suggested when not),
 * every value flag given its value, no stray positional. Values are taken as kubectl users write
 * them: `-ndemo`, `-n=demo`, and values that start with a dash (`--timeout -1m` reaches the duration
 * parser, which says what is wrong with it, instead of becoming an unknown flag). The result holds
 * every value typed: every value of a repeatable flag in order, a boolean as written (`--x`, `--no-x`,
 * `--x=<v>`), the positionals. Nothing reads argv after this module.
 */
import { AicrError } from "../core/errors.ts";
import { nearest } from "../core/suggest.ts";
import {
  type FlagSpecs,
  isFlag,
  isRepeatable,
  type Spelling,
  spellings,
  takesValue,
  valueHintOf,
} from "./_flag-spec.ts";

/** A boolean as written: true (`--x`), false (`--no-x`), or the text of `--x=<v>` for its parser. */
export type Written = string | boolean;

/** What argv gave: per declared key, every value in order (a boolean: the last, as written). */
export interface ParsedArgv {
  readonly values: ReadonlyMap<string, readonly Written[]>;
  readonly positionals: readonly string[];
}

const dashed = (name: string): string => (name.length === 1 ? `-${name}` : `--${name}`);

/** Index of the command name: the first argument that is neither a flag nor a global flag's value. */
export function commandIndex(argv: readonly string[], globals: FlagSpecs): number {
  const known = spellings(globals);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--") return -1;
    if (arg.startsWith("-")) {
      if (!arg.includes("=") && known.get(arg.replace(/^--?/, ""))?.takesValue) i++;
      continue;
    }
    return i;
  }
  return -1;
}

/** The spellings a boolean's value may take (`--x=<v>`), as the README documents them. */
export const BOOLEAN_SPELLINGS = ["true", "false", "1", "0", "yes", "no"] as const;

/**
 * argv with every value flag as `--key=value` (booleans as written), and the first problem found
 * (an INVALID_REQUEST) if any. The reading goes on after a problem, so that what could be read
 * (--log-json, --debug) still shapes the error's report.
 *
 * Refused here, whatever the command: a value flag with an empty value (`-n ""`, `--namespace=`:
 * an unset shell variable must not quietly mean the default), an empty item of a comma list, a
 * single-value flag given twice in any of its spellings (`-t json -t yaml`: which one was meant is
 * not aicr's to guess; repeatable and list flags take every value), a boolean written other than
 * true/false/1/0/yes/no, and more words than the command takes — those after `--` included (`--`
 * ends the flags: every word after it is an argument, even one starting with a dash).
 */
export function scanArgv(
  command: string,
  argv: readonly string[],
  specs: FlagSpecs,
): { tokens: string[]; problem?: AicrError } {
  const known = spellings(specs);
  const who = command ? `aicr ${command}` : "aicr";
  const args = Object.values(specs);
  const positionals = args.filter((d) => d.type === "positional").length;
  // A positional marked `variadic` (e.g. `aicr runs delete <run-id>…`) takes every further word too.
  const variadic = args.some((d) => d.type === "positional" && d.variadic === true);
  let problem: AicrError | undefined;
  const bad = (message: string, context: Record<string, unknown>, remedy?: string) => {
    problem ??= new AicrError("INVALID_REQUEST", message, {
      remedy: remedy ?? `run "${who} --help" for the flags it takes`,
      context,
    });
  };
  const isFlagToken = (token: string | undefined): boolean => {
    if (token === undefined || !token.startsWith("-") || token === "-") return false;
    const name = token.replace(/^--?/, "").split("=")[0] ?? "";
    return known.has(name) || (!token.startsWith("--") && known.has(name.slice(0, 1)));
  };
  const takes =
    positionals === 0
      ? `"${who}" takes no arguments, only flags`
      : `"${who}" takes ${positionals} argument${positionals > 1 ? "s" : ""}`;
  const out: string[] = [];
  /** Each single-value flag's first value and how it was spelled: a second one is refused. */
  const single = new Map<string, { value: string; as: string }>();
  let seen = 0;
  /** A word: the next positional, or refused when the command takes no more. */
  const word = (token: string, afterDashes: boolean) => {
    if (++seen > positionals && !variadic) {
      bad(
        `unexpected argument ${JSON.stringify(token)}${afterDashes ? ' after "--"' : ""} for "${who}"`,
        { argument: token },
        afterDashes
          ? `"--" ends the flags: every word after it is an argument, and ${takes}; put the flags before "--" (see "${who} --help")`
          : `${takes} (see "${who} --help")`,
      );
      return;
    }
    out.push(token);
  };
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? "";
    if (token === "--") {
      out.push("--");
      for (const rest of argv.slice(i + 1)) word(rest, true);
      break;
    }
    if (!token.startsWith("-") || token === "-") {
      word(token, false);
      continue;
    }
    const long = token.startsWith("--");
    const body = token.slice(long ? 2 : 1);
    const eq = body.indexOf("=");
    let name = eq >= 0 ? body.slice(0, eq) : body;
    let value: string | undefined = eq >= 0 ? body.slice(eq + 1) : undefined;
    // -ndemo: a one-letter value flag with its value attached, as pflag reads it
    if (!long && !known.has(name) && known.get(body.slice(0, 1))?.takesValue) {
      [name, value] = [body.slice(0, 1), body.slice(1).replace(/^=/, "")];
    }
    const spelling = known.get(name);
    if (!spelling) {
      const guess = nearest(
        name,
        [...known.keys()].filter((k) => k.length > 1),
      );
      bad(
        `unknown flag ${JSON.stringify(token)} for "${who}"${guess ? `: did you mean "--${guess}"?` : ""}`,
        {
          flag: token,
        },
      );
      continue;
    }
    if (!spelling.takesValue) {
      if (value !== undefined && !(BOOLEAN_SPELLINGS as readonly string[]).includes(value))
        bad(
          `invalid ${dashed(name)} ${JSON.stringify(value)}: expected true or false (also 1/0, yes/no)`,
          { field: dashed(name), value },
          `write --${spelling.key} or --no-${spelling.key} (or --${spelling.key}=true|false)`,
        );
      out.push(token);
      continue;
    }
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || next === "--" || isFlagToken(next)) {
        bad(`flag ${dashed(name)} needs a value`, { flag: dashed(name) }, `write ${dashed(name)} <value>`);
        continue;
      }
      value = next;
      i++;
    }
    const spec = specs[spelling.key];
    const hint = spec && takesValue(spec) ? valueHintOf(spelling.key, spec) : "value";
    if (value === "")
      bad(
        `invalid ${dashed(name)} "": an empty value (an unset shell variable?)`,
        { field: dashed(name), value },
        `write ${dashed(name)} <${hint}>, or leave ${dashed(name)} out for its default`,
      );
    else if (spec && takesValue(spec) && spec.list === true && value.split(",").some((p) => p.trim() === ""))
      bad(
        `invalid ${dashed(name)} ${JSON.stringify(value)}: an empty item in the comma list`,
        { field: dashed(name), value },
        `write ${dashed(name)} <${hint}>[,<${hint}>…] with no empty item`,
      );
    if (spec && !isRepeatable(spec)) {
      const first = single.get(spelling.key);
      if (first)
        bad(
          `flag --${spelling.key} can only be given once: got ${JSON.stringify(first.value)} (${first.as}), then ${JSON.stringify(value)} (${dashed(name)})`,
          { field: `--${spelling.key}`, values: [first.value, value] },
          `give --${spelling.key} one value (see "${who} --help")`,
        );
      else single.set(spelling.key, { value, as: dashed(name) });
    }
    out.push(`--${spelling.key}=${value}`);
  }
  return problem ? { tokens: out, problem } : { tokens: out };
}

/** This process's arguments after the program's name: the only place that reads process.argv. */
export const commandLine = (): string[] => process.argv.slice(2);

/** `--help`/`-h` anywhere before `--`, before any reading (help never fails on the rest). */
export function helpAsked(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  const flags = end < 0 ? argv : argv.slice(0, end);
  return flags.includes("--help") || flags.includes("-h");
}

/** `aicr --version` alone. */
export const versionAsked = (argv: readonly string[]): boolean =>
  argv.length === 1 && argv[0] === "--version";

/** argv as scanArgv writes it, or its first problem thrown. */
export function normalizeArgv(command: string, argv: readonly string[], specs: FlagSpecs): string[] {
  const { tokens, problem } = scanArgv(command, argv, specs);
  if (problem) throw problem;
  return tokens;
}
/**
 * Every value of a repeatable value flag, in order, from normalized argv (where each is
 * `--<key>=value`, whatever the spelling given). With `list`, comma lists (`-n a,b`) are split and
 * trimmed and duplicates dropped. Nothing after `--` counts.
 */
export function flagValues(argv: readonly string[], key: string, options: { list?: boolean } = {}): string[] {
  const values: string[] = [];
  const prefix = `--${key}=`;
  for (const arg of argv) {
    if (arg === "--") break;
    if (!arg.startsWith(prefix)) continue;
    const value = arg.slice(prefix.length);
    if (!options.list) {
      values.push(value);
      continue;
    }
    for (const part of value.split(",")) {
      const v = part.trim();
      if (!values.includes(v)) values.push(v);
    }
  }
  return values;
}

/**
 * A boolean flag as the operator wrote it, the last spelling winning: true for `--x`, false for
 * `--no-x`, the raw text of `--x=<v>` (its parser says what is wrong with it), undefined if absent.
 * `--no-x=<v>` negates a true/false spelling.
 */
export function flagBoolean(argv: readonly string[], key: string): boolean | string | undefined {
  let value: boolean | string | undefined;
  for (const arg of argv) {
    if (arg === "--") break;
    if (arg === `--${key}`) value = true;
    else if (arg === `--no-${key}`) value = false;
    else if (arg.startsWith(`--${key}=`)) value = arg.slice(key.length + 3);
    else if (arg.startsWith(`--no-${key}=`)) {
      const v = arg.slice(key.length + 6);
      value = ["true", "1", "yes"].includes(v) ? false : ["false", "0", "no"].includes(v) ? true : v;
    }
  }
  return value;
}

/**
 * The declared keys of the flags normalized argv gives, whatever the spelling (alias, `--no-x`,
 * `--x=<v>`); nothing after `--` counts.
 */
export function givenFlags(argv: readonly string[], specs: FlagSpecs): Set<string> {
  const known = spellings(specs);
  const given = new Set<string>();
  for (const arg of argv) {
    if (arg === "--") break;
    if (!arg.startsWith("-") || arg === "-") continue;
    const spelling = known.get(arg.replace(/^--?/, "").split("=")[0] ?? "");
    if (spelling) given.add(spelling.key);
  }
  return given;
}

/** A flag token under its key's own spelling (`-q` → `--quiet`, `--no-q` → `--no-quiet`). */
function canonical(token: string, known: Map<string, Spelling>): string {
  if (!token.startsWith("-") || token === "-") return token;
  const body = token.replace(/^--?/, "");
  const eq = body.indexOf("=");
  const name = eq >= 0 ? body.slice(0, eq) : body;
  const rest = eq >= 0 ? body.slice(eq) : "";
  const spelling = known.get(name);
  if (!spelling) return token;
  return `--${name === `no-${spelling.key}` ? "no-" : ""}${spelling.key}${rest}`;
}

/** The typed result of normalized argv: each given key's values, and the positionals (all after `--`). */
function resultOf(tokens: readonly string[], specs: FlagSpecs): ParsedArgv {
  const known = spellings(specs);
  const end = tokens.indexOf("--");
  const flagPart = (end < 0 ? tokens : tokens.slice(0, end)).map((t) => canonical(t, known));
  const values = new Map<string, Written[]>();
  for (const key of givenFlags(flagPart, specs)) {
    const spec = specs[key];
    if (!spec || !isFlag(spec)) continue;
    if (takesValue(spec)) {
      // Every value, in order (a flag that is not repeatable has one: scanArgv refuses a second).
      values.set(key, flagValues(flagPart, key, { list: spec.list === true }));
    } else {
      const written = flagBoolean(flagPart, key);
      if (written !== undefined) values.set(key, [written]);
    }
  }
  const words = (list: readonly string[]) => list.filter((t) => !t.startsWith("-") || t === "-");
  const positionals = end < 0 ? words(tokens) : [...words(tokens.slice(0, end)), ...tokens.slice(end + 1)];
  return { values, positionals };
}

export interface ArgvReading {
  parsed: ParsedArgv;
  /** The first problem (an INVALID_REQUEST); `parsed` then holds what could be read. */
  problem?: AicrError;
}

/** argv read once against a command's declared flags (see the module comment). */
export function readArgv(command: string, argv: readonly string[], specs: FlagSpecs): ArgvReading {
  const { tokens, problem } = scanArgv(command, argv, specs);
  const parsed = resultOf(tokens, specs);
  return problem ? { parsed, problem } : { parsed };
}

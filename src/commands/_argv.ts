/**
 * The one check of a command's argv before citty parses it: every flag known (with the nearest
 * spelling suggested when not), every value flag given its value, no stray positional. It also
 * rewrites what citty would misread into `--name=value`: `-ndemo` and `-n=demo` (as kubectl users
 * write them) and values that start with a dash (`--timeout -1m` reaches the duration parser, which
 * says what is wrong with it, instead of becoming an unknown flag). What citty keeps only once — every
 * value of a repeatable flag, a boolean as written — is read back here too, from the same argv.
 */
import type { ArgDef, ArgsDef } from "citty";
import { AicrError } from "../core/errors.ts";
import { nearest } from "../core/suggest.ts";

const aliasesOf = (def: ArgDef): string[] => [(def as { alias?: string | string[] }).alias ?? []].flat();

interface Spelling {
  /** The argument's key: `--<key>=value` is what citty is given. */
  key: string;
  takesValue: boolean;
}

function spellings(args: ArgsDef): Map<string, Spelling> {
  const out = new Map<string, Spelling>([
    ["help", { key: "help", takesValue: false }],
    ["h", { key: "help", takesValue: false }],
  ]);
  for (const [key, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    const takesValue = def.type === "string" || def.type === "enum";
    for (const name of [key, ...aliasesOf(def)]) out.set(name, { key, takesValue });
    if (def.type === "boolean") out.set(`no-${key}`, { key, takesValue: false });
  }
  return out;
}

const dashed = (name: string): string => (name.length === 1 ? `-${name}` : `--${name}`);

/** argv as citty should see it, or an INVALID_REQUEST naming the first problem. */
export function normalizeArgv(command: string, argv: readonly string[], args: ArgsDef): string[] {
  const known = spellings(args);
  const who = command ? `aicr ${command}` : "aicr";
  const positionals = Object.values(args).filter((d) => d.type === "positional").length;
  // A positional marked `variadic` (e.g. `aicr runs delete <run-id>…`) takes every further word too.
  const variadic = Object.values(args).some(
    (d) => d.type === "positional" && (d as { variadic?: boolean }).variadic === true,
  );
  const bad = (message: string, context: Record<string, unknown>, remedy?: string) =>
    new AicrError("INVALID_REQUEST", message, {
      remedy: remedy ?? `run "${who} --help" for the flags it takes`,
      context,
    });
  const isFlag = (token: string | undefined): boolean => {
    if (token === undefined || !token.startsWith("-") || token === "-") return false;
    const name = token.replace(/^--?/, "").split("=")[0] ?? "";
    return known.has(name) || (!token.startsWith("--") && known.has(name.slice(0, 1)));
  };
  const out: string[] = [];
  let seen = 0;
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? "";
    if (token === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (!token.startsWith("-") || token === "-") {
      if (++seen > positionals && !variadic) {
        throw bad(
          `unexpected argument ${JSON.stringify(token)} for "${who}"`,
          { argument: token },
          positionals === 0
            ? `"${who}" takes no arguments, only flags (see "${who} --help")`
            : `"${who}" takes ${positionals} argument${positionals > 1 ? "s" : ""} (see "${who} --help")`,
        );
      }
      out.push(token);
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
      throw bad(
        `unknown flag ${JSON.stringify(token)} for "${who}"${guess ? `: did you mean "--${guess}"?` : ""}`,
        { flag: token },
      );
    }
    if (!spelling.takesValue) {
      out.push(token);
      continue;
    }
    if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || next === "--" || isFlag(next)) {
        throw bad(
          `flag ${dashed(name)} needs a value`,
          { flag: dashed(name) },
          `write ${dashed(name)} <value>`,
        );
      }
      value = next;
      i++;
    }
    out.push(`--${spelling.key}=${value}`);
  }
  return out;
}

/**
 * Every value of a repeatable value flag, in order, from normalized argv (where each is
 * `--<key>=value`, whatever the spelling given): citty keeps only the last. With `list`, comma lists
 * (`-n a,b`) are split and trimmed and duplicates dropped. Nothing after `--` counts.
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
 * `--no-x=<v>` negates a true/false spelling. citty would read `--x=maybe` as true.
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
 * `--x=<v>`); nothing after `--` counts. What a config file may still supply is every other flag.
 */
export function givenFlags(argv: readonly string[], args: ArgsDef): Set<string> {
  const known = spellings(args);
  const given = new Set<string>();
  for (const arg of argv) {
    if (arg === "--") break;
    if (!arg.startsWith("-") || arg === "-") continue;
    const spelling = known.get(arg.replace(/^--?/, "").split("=")[0] ?? "");
    if (spelling) given.add(spelling.key);
  }
  return given;
}

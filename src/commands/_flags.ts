/**
 * A command's flag values as its run reads them: the one reading of argv (_argv.ts) with the
 * `--config` file's values merged in (the command line winning), read through the declarations
 * (_flag-spec.ts): a value flag's last value or every value, a boolean checked, a positional.
 */
import { AicrError } from "../core/errors.ts";
import type { ParsedArgv, Written } from "./_argv.ts";
import { type FlagSpecs, isFlag } from "./_flag-spec.ts";
import { parseBool } from "./_parse.ts";

/** Values from elsewhere (a config file) merged under argv's: a key argv gives keeps argv's values. */
export function mergeUnder(parsed: ParsedArgv, values: ReadonlyMap<string, readonly Written[]>): ParsedArgv {
  const merged = new Map(values);
  for (const [key, given] of parsed.values) merged.set(key, given);
  return { values: merged, positionals: parsed.positionals };
}

/** The environment switches of the logging flags (the original's): read when the flag is not given. */
export const LOGGING_ENV = { debug: "AICR_DEBUG", "log-json": "AICR_LOG_JSON" } as const;
type LoggingSwitch = keyof typeof LOGGING_ENV;

type Env = Readonly<Record<string, string | undefined>>;

/** A logging switch as the command line writes it (`--x`, `--no-x`, `--x=<v>`), else as its variable does. */
function switchOf(
  parsed: ParsedArgv,
  key: LoggingSwitch,
  env: Env,
): { value: Written; from: string } | undefined {
  const written = parsed.values.get(key)?.at(-1);
  if (written !== undefined) return { value: written, from: `--${key}` };
  const value = env[LOGGING_ENV[key]];
  return value === undefined || value === "" ? undefined : { value, from: LOGGING_ENV[key] };
}

/**
 * --log-json and --debug (or -v ≥ 4), else AICR_LOG_JSON and AICR_DEBUG, as far as they could be
 * read: for the report of any error (a value no boolean spelling reads as off here; loggingSwitches
 * refuses it).
 */
export function loggingOf(parsed: ParsedArgv, env: Env = process.env): { json: boolean; debug: boolean } {
  const on = (key: LoggingSwitch) => {
    const w = switchOf(parsed, key, env)?.value;
    return w === true || (typeof w === "string" && ["true", "1", "yes"].includes(w));
  };
  const level = Number(parsed.values.get("v")?.at(-1) ?? "0");
  return { json: on("log-json"), debug: on("debug") || level >= 4 };
}

/**
 * --debug and --log-json for the run, checked: the flag as written wins (`--no-debug` over
 * AICR_DEBUG=true); else the variable, which takes the flag's spellings (true/false, 1/0, yes/no;
 * empty is unset) and is refused naming itself when it is anything else.
 */
export function loggingSwitches(
  parsed: ParsedArgv,
  env: Env = process.env,
): { json: boolean; debug: boolean } {
  const read = (key: LoggingSwitch) => {
    const found = switchOf(parsed, key, env);
    return parseBool(found?.from ?? `--${key}`, found?.value, false);
  };
  return { json: read("log-json"), debug: read("debug") };
}

const usageError = (path: string, message: string) =>
  new AicrError("INVALID_REQUEST", message, { remedy: `run "aicr ${path} --help" for usage` });

/** Required positionals and value flags, once argv and the config are merged (`path`: the command as typed). */
export function checkRequired(path: string, specs: FlagSpecs, parsed: ParsedArgv): void {
  let at = 0;
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.type === "positional") {
      if (parsed.positionals[at++] === undefined && spec.default === undefined && spec.required !== false)
        throw usageError(path, `Missing required positional argument: ${name.toUpperCase()}`);
    } else if (spec.type !== "boolean" && spec.required && !parsed.values.has(name))
      throw usageError(path, `Missing required argument: --${name}`);
  }
}

/** The values of one command, by its declared keys `K`. */
export class Flags<K extends string = string> {
  constructor(
    readonly specs: FlagSpecs,
    readonly parsed: ParsedArgv,
  ) {}

  private spec(name: K) {
    const spec = this.specs[name];
    if (!spec) throw new Error(`flag "${name}" is not declared by this command`);
    return spec;
  }

  /** Given on the command line or by the config. */
  given(name: K): boolean {
    return this.parsed.values.has(name);
  }

  /** A value flag's last value (its default when absent), or a positional's word. */
  string(name: K): string | undefined {
    const spec = this.spec(name);
    if (spec.type === "positional") {
      const at = Object.entries(this.specs)
        .filter(([, s]) => s.type === "positional")
        .findIndex(([n]) => n === name);
      return this.parsed.positionals[at] ?? spec.default;
    }
    const last = this.parsed.values.get(name)?.at(-1);
    if (last === undefined) return spec.type === "boolean" ? undefined : spec.default;
    return String(last);
  }

  /** Every value of a repeatable flag, in order. */
  list(name: K): string[] {
    this.spec(name);
    return (this.parsed.values.get(name) ?? []).map(String);
  }

  /** A boolean as written (true, false, or the text of `--x=<v>`), undefined when absent. */
  written(name: K): Written | undefined {
    this.spec(name);
    return this.parsed.values.get(name)?.at(-1);
  }

  /** A boolean: true/1/yes, false/0/no, else refused naming the flag; its default when absent. */
  bool(name: K): boolean {
    const spec = this.spec(name);
    const fallback = isFlag(spec) && spec.type === "boolean" ? (spec.default ?? false) : false;
    return parseBool(`--${name}`, this.written(name), fallback);
  }

  /** Every positional word, in order (a variadic one's included). */
  get positionals(): string[] {
    return [...this.parsed.positionals];
  }
}

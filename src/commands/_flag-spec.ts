/**
 * A command's flags, each declared once (pure): its type, spellings, value hint, where else its
 * value may come from, and whether help lists it. The parser (_argv.ts), the help page (_usage.ts),
 * completion (_completion.ts), `--config` keys (_config-flags.ts) and the documented-flags test all
 * read these declarations; nothing else describes a flag.
 */

/** A value flag's kind: any text, a Go-style duration (parsed by _parse.ts), or one of `options`. */
export type ValueKind = "string" | "duration" | "enum";

interface Common {
  description?: string;
  /** Other spellings: one letter (`-n`) or a long name. */
  alias?: string | readonly string[];
  /** Accepted, never listed in help or completion. */
  hidden?: boolean;
}

export interface ValueFlag extends Common {
  type: ValueKind;
  /** The word help shows after the flag: `--output <dest>`. */
  valueHint?: string;
  /** enum: the values it takes (offered by completion; the command's resolver says what is wrong). */
  options?: readonly string[];
  default?: string;
  required?: boolean;
  /** Every value kept, in order (`--node-selector a=b --node-selector c=d`); a config key takes a list. */
  repeatable?: boolean;
  /** Repeatable, and a comma list splits into values, trimmed, duplicates dropped (`-n a,b`). */
  list?: boolean;
  /** Values are key=value pairs: a config key takes a map (one value per entry, or comma-joined). */
  pairs?: boolean;
  /** The environment variable read when the flag is absent (help names it). */
  env?: string;
  /** A config file may not set it: why (the refusal's remedy). */
  notInConfig?: string;
}

export interface BooleanFlag extends Common {
  type: "boolean";
  default?: boolean;
  /** What `--no-<flag>` does (help gives it its own line). */
  negativeDescription?: string;
  env?: string;
  notInConfig?: string;
}

export interface PositionalArg extends Common {
  type: "positional";
  valueHint?: string;
  /** false: may be left out (default: required). */
  required?: boolean;
  default?: string;
  /** Takes every further word (`aicr runs delete <run-id>…`). */
  variadic?: boolean;
}

export type FlagSpec = ValueFlag | BooleanFlag | PositionalArg;
export type FlagSpecs = Readonly<Record<string, FlagSpec>>;

export const aliasesOf = (spec: FlagSpec): string[] => [spec.alias ?? []].flat();

export const takesValue = (spec: FlagSpec): spec is ValueFlag =>
  spec.type === "string" || spec.type === "duration" || spec.type === "enum";

/** Every value kept (a list), not only the last. */
export const isRepeatable = (spec: FlagSpec): boolean =>
  takesValue(spec) && (spec.repeatable === true || spec.list === true);

export const isFlag = (spec: FlagSpec): spec is ValueFlag | BooleanFlag => spec.type !== "positional";

/** The word help shows for a value flag: its hint, else its options, else its kind or name. */
export function valueHintOf(name: string, spec: ValueFlag): string {
  if (spec.valueHint) return spec.valueHint;
  if (spec.options?.length) return spec.options.join("|");
  return spec.type === "duration" ? "duration" : name;
}

export interface Spelling {
  /** The declared key the spelling stands for. */
  key: string;
  takesValue: boolean;
}

/** Every spelling a command accepts (`--help`/`-h`, aliases, `--no-x` for booleans) → its key. */
export function spellings(specs: FlagSpecs): Map<string, Spelling> {
  const out = new Map<string, Spelling>([
    ["help", { key: "help", takesValue: false }],
    ["h", { key: "help", takesValue: false }],
  ]);
  for (const [key, spec] of Object.entries(specs)) {
    if (!isFlag(spec)) continue;
    for (const name of [key, ...aliasesOf(spec)]) out.set(name, { key, takesValue: takesValue(spec) });
    if (spec.type === "boolean") out.set(`no-${key}`, { key, takesValue: false });
  }
  return out;
}

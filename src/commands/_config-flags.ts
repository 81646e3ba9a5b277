/**
 * One command's section of an AICRConfig document → flag values (pure). Keys are the camelCase of the
 * command's declared flags (_flag-spec.ts), so a flag added to a command is a config key at once.
 * Values by the flag's type: true/false for a boolean, a string or number for a value flag, a list for
 * a repeatable one, and a `key: value` map for one whose values are key=value pairs (one value per
 * entry when repeatable, else comma-joined). A flag declared `notInConfig` is refused with its reason.
 * Only flags absent from the command line take the file's values: the command line wins, and a
 * repeatable flag given there replaces the config's values instead of adding to them.
 */
import { nearest } from "../core/suggest.ts";
import { type FlagSpec, type FlagSpecs, isFlag, isRepeatable, takesValue } from "./_flag-spec.ts";

/**
 * A record with no prototype: a key read from a document (`constructor`, `toString`, `__proto__`)
 * finds only what was written here, never Object.prototype's members.
 */
const ownRecord = <T>(entries: Record<string, T>): Readonly<Record<string, T>> =>
  Object.freeze(Object.assign(Object.create(null) as Record<string, T>, entries));

/** Groupings a section may use (as the original's documents do); their keys map onto the same flags. */
export const CONFIG_GROUPS: Readonly<Record<string, Readonly<Record<string, readonly string[] | "any">>>> =
  ownRecord({
    snapshot: ownRecord<readonly string[] | "any">({ agent: "any" }),
    validate: ownRecord<readonly string[] | "any">({ agent: "any", input: ["recipe", "snapshot"] }),
  });

/** The keys a group of `command`'s section takes ("any": every flag key), or undefined: `key` is no group. */
export function configGroup(command: string, key: string): readonly string[] | "any" | undefined {
  const groups = Object.hasOwn(CONFIG_GROUPS, command) ? CONFIG_GROUPS[command] : undefined;
  return groups && Object.hasOwn(groups, key) ? groups[key] : undefined;
}

export const camel = (flag: string): string =>
  flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Why a config may not set this flag, if it may not. */
const refusal = (spec: FlagSpec | undefined): string | undefined =>
  spec && isFlag(spec) ? spec.notInConfig : undefined;

interface KeyTarget {
  flag: string;
  /** `noCleanup: true` sets `--cleanup` false; `cluster: false` sets `--no-cluster`. */
  negate: boolean;
}

/** Every config key a command's flags answer to: camelCase, the plural of repeatable ones, noX/x for booleans. */
export function configKeys(args: FlagSpecs): Map<string, KeyTarget> {
  const out = new Map<string, KeyTarget>();
  const add = (key: string, target: KeyTarget) => {
    if (!out.has(key)) out.set(key, target);
  };
  const entries = Object.entries(args).filter(([, d]) => d.type !== "positional");
  for (const [flag] of entries) add(camel(flag), { flag, negate: false });
  for (const [flag, def] of entries) {
    if (def.type === "boolean") {
      if (flag.startsWith("no-")) add(camel(flag.slice(3)), { flag, negate: true });
      else add(camel(`no-${flag}`), { flag, negate: true });
    } else if (isRepeatable(def)) add(`${camel(flag)}s`, { flag, negate: false });
  }
  return out;
}

export interface ConfigEntry {
  /** The key's path in the document, for messages: `spec.snapshot.agent.nodeSelector`. */
  path: string;
  key: string;
  value: unknown;
}

export interface Mapped {
  /** Each flag's values from the file: strings, or a boolean. */
  values: Map<string, (string | boolean)[]>;
  problems: string[];
}

const isMap = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);
/** A flag's value: a non-empty string or a finite number (an empty string is no value). */
const scalar = (x: unknown): string | undefined =>
  typeof x === "string" && x !== "" ? x : typeof x === "number" && Number.isFinite(x) ? String(x) : undefined;
/**
 * Map values: YAML reads `nvidia.com/gpu.present: true` as a boolean; the flag takes its text. An
 * empty string is a value here (a label's value may be empty: `role: ""`).
 */
const mapScalar = (x: unknown): string | undefined =>
  typeof x === "boolean" || x === "" ? String(x) : scalar(x);

/** A key's path segment: `.name`, or `["odd key"]`. */
export const at = (parent: string, key: string): string =>
  /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;

const EMPTY = "an empty string is no value (leave the key out for the flag's default)";

/** The values one entry gives its flag, or a problem naming its path. */
function values(entry: ConfigEntry, def: FlagSpec): string[] | string {
  const { path, value } = entry;
  const repeatable = isRepeatable(def);
  const form = takesValue(def) && def.pairs ? (repeatable ? "entries" : "joined") : undefined;
  if (form && isMap(value)) {
    const pairs: string[] = [];
    for (const [k, v] of Object.entries(value)) {
      const text = mapScalar(v);
      if (text === undefined) return `${at(path, k)}: expected a string (a map of strings, key: value)`;
      pairs.push(`${k}=${text}`);
    }
    return form === "entries" ? pairs : pairs.length ? [pairs.join(",")] : [];
  }
  const expected = form
    ? repeatable
      ? "expected a map of strings (key: value) or a list of key=value strings"
      : "expected a map of strings (key: value) or a key=value,… string"
    : repeatable
      ? "expected a string or a list of strings"
      : "expected a string or a number";
  if (repeatable && Array.isArray(value)) {
    const out: string[] = [];
    for (const [i, item] of value.entries()) {
      const text = scalar(item);
      if (item === "") return `${path}[${i}]: ${EMPTY}`;
      if (text === undefined) return `${path}[${i}]: expected a string`;
      out.push(text);
    }
    return out;
  }
  if (value === "") return `${path}: ${EMPTY}`;
  const text = scalar(value);
  return text === undefined ? `${path}: ${expected}` : [text];
}

/**
 * The values of every entry whose flag is not in `given`, and every problem found, each naming its
 * path (a value the command line overrides is still checked). `command` is for messages.
 */
export function mapConfigEntries(
  command: string,
  entries: readonly ConfigEntry[],
  args: FlagSpecs,
  given: ReadonlySet<string>,
): Mapped {
  const keys = configKeys(args);
  const suggestable = [...keys.entries()].filter(([, t]) => !refusal(args[t.flag])).map(([k]) => k);
  const setBy = new Map<string, string>();
  const out = new Map<string, (string | boolean)[]>();
  const problems: string[] = [];
  for (const entry of entries) {
    const target = keys.get(entry.key);
    if (!target) {
      const kebab = keys.get(camel(entry.key));
      const guess = kebab && !refusal(args[kebab.flag]) ? camel(entry.key) : nearest(entry.key, suggestable);
      problems.push(
        `${entry.path}: unknown key for "aicr ${command}"${guess ? `: did you mean "${guess}"?` : ""}`,
      );
      continue;
    }
    const { flag, negate } = target;
    const def = args[flag] as FlagSpec;
    const refused = refusal(def);
    if (refused) {
      problems.push(`${entry.path}: --${flag} cannot be set in a config file (${refused})`);
      continue;
    }
    const earlier = setBy.get(flag);
    if (earlier) {
      problems.push(`${entry.path}: --${flag} is already set by ${earlier}`);
      continue;
    }
    setBy.set(flag, entry.path);
    if (def.type === "boolean") {
      if (typeof entry.value !== "boolean") {
        problems.push(`${entry.path}: expected true or false`);
        continue;
      }
      if (!given.has(flag)) out.set(flag, [entry.value !== negate]);
      continue;
    }
    const got = values(entry, def);
    if (typeof got === "string") problems.push(got);
    else if (!given.has(flag) && got.length > 0) out.set(flag, isRepeatable(def) ? got : got.slice(-1));
  }
  return { values: out, problems };
}

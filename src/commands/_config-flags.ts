/**
 * One command's section of an AICRConfig document → flag tokens (pure). Keys are the camelCase of the
 * command's declared flags, read from the same definitions as _argv.ts, so a flag added to a command
 * is a config key at once. Values: true/false for boolean flags, a string or number for value flags, a
 * list for repeatable ones (a flag whose help says "repeatable"), and a `key: value` map for flags whose
 * values are key=value pairs (value hint `k=v`: one token per entry; value hint `list`: comma-joined).
 * Only flags absent from the command line are emitted: the command line wins, and a repeatable flag
 * given there replaces the config's values instead of adding to them.
 */
import type { ArgDef, ArgsDef } from "citty";
import { nearest } from "../core/suggest.ts";

/** Groupings a section may use (as the original's documents do); their keys map onto the same flags. */
export const CONFIG_GROUPS: Readonly<Record<string, Readonly<Record<string, readonly string[] | "any">>>> = {
  snapshot: { agent: "any" },
  validate: { agent: "any", input: ["recipe", "snapshot"] },
};

/** Flags a config may not set, and why (the remedy of the refusal). */
export const REFUSED_FLAGS: Readonly<Record<string, string>> = {
  config: "a config file cannot name another one",
  debug: "logging starts before the config is read: pass --debug on the command line",
  v: "logging starts before the config is read: pass -v on the command line",
  "log-json": "logging starts before the config is read: pass --log-json on the command line",
  "run-id": "a run ID names a single run: pass --run-id (or $AICR_RUN_ID) for the run that needs it",
  help: "help is not a setting: pass --help on the command line",
};

export const camel = (flag: string): string =>
  flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

type Def = ArgDef & { description?: string; valueHint?: string; repeatable?: boolean };
const isRepeatable = (d: Def): boolean =>
  d.repeatable === true || /\brepeatable\b/i.test(d.description ?? "");
const mapForm = (d: Def): "tokens" | "joined" | undefined =>
  (d.valueHint ?? "").includes("=") ? "tokens" : d.valueHint === "list" ? "joined" : undefined;

interface KeyTarget {
  flag: string;
  /** `noCleanup: true` sets `--cleanup` false; `cluster: false` sets `--no-cluster`. */
  negate: boolean;
}

/** Every config key a command's flags answer to: camelCase, the plural of repeatable ones, noX/x for booleans. */
export function configKeys(args: ArgsDef): Map<string, KeyTarget> {
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
    } else if (isRepeatable(def as Def)) add(`${camel(flag)}s`, { flag, negate: false });
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
  tokens: string[];
  problems: string[];
}

const isMap = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);
const scalar = (x: unknown): string | undefined =>
  typeof x === "string" ? x : typeof x === "number" && Number.isFinite(x) ? String(x) : undefined;
/** Map values: YAML reads `nvidia.com/gpu.present: true` as a boolean; the flag takes its text. */
const mapScalar = (x: unknown): string | undefined => (typeof x === "boolean" ? String(x) : scalar(x));

/** A key's path segment: `.name`, or `["odd key"]`. */
export const at = (parent: string, key: string): string =>
  /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;

/** The values one entry gives its flag, or a problem naming its path. */
function values(entry: ConfigEntry, def: Def): string[] | string {
  const { path, value } = entry;
  const repeatable = isRepeatable(def);
  const form = mapForm(def);
  if (form && isMap(value)) {
    const pairs: string[] = [];
    for (const [k, v] of Object.entries(value)) {
      const text = mapScalar(v);
      if (text === undefined) return `${at(path, k)}: expected a string (a map of strings, key: value)`;
      pairs.push(`${k}=${text}`);
    }
    return form === "tokens" && repeatable ? pairs : pairs.length ? [pairs.join(",")] : [];
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
      if (text === undefined) return `${path}[${i}]: expected a string`;
      out.push(text);
    }
    return out;
  }
  const text = scalar(value);
  return text === undefined ? `${path}: ${expected}` : [text];
}

/**
 * The tokens (`--key=value`, `--key`, `--no-key`) for every entry whose flag is not in `given`, and
 * every problem found, each naming its path. `command` is for messages.
 */
export function mapConfigEntries(
  command: string,
  entries: readonly ConfigEntry[],
  args: ArgsDef,
  given: ReadonlySet<string>,
): Mapped {
  const keys = configKeys(args);
  const suggestable = [...keys.entries()].filter(([, t]) => !(t.flag in REFUSED_FLAGS)).map(([k]) => k);
  const setBy = new Map<string, string>();
  const tokens: string[] = [];
  const problems: string[] = [];
  for (const entry of entries) {
    const target = keys.get(entry.key);
    if (!target) {
      const kebab = keys.get(camel(entry.key));
      const guess =
        kebab && !(kebab.flag in REFUSED_FLAGS) ? camel(entry.key) : nearest(entry.key, suggestable);
      problems.push(
        `${entry.path}: unknown key for "aicr ${command}"${guess ? `: did you mean "${guess}"?` : ""}`,
      );
      continue;
    }
    const { flag, negate } = target;
    const refused = REFUSED_FLAGS[flag];
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
    const def = args[flag] as Def;
    if (def.type === "boolean") {
      if (typeof entry.value !== "boolean") {
        problems.push(`${entry.path}: expected true or false`);
        continue;
      }
      if (!given.has(flag)) tokens.push(entry.value !== negate ? `--${flag}` : `--no-${flag}`);
      continue;
    }
    const got = values(entry, def);
    if (typeof got === "string") problems.push(got);
    else if (!given.has(flag)) tokens.push(...got.map((v) => `--${flag}=${v}`));
  }
  return { tokens, problems };
}

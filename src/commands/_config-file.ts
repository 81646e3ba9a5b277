/**
 * `--config <file>`: an AICRConfig document whose `spec.<command>` section gives that command's flags
 * values. Read once argv is read (_argv.ts): the section's values are merged under the command line's
 * (which wins) for every flag it does not give, so every parser, default and pre-flight check applies
 * to them unchanged. Every problem is an INVALID_REQUEST naming its path in the document, before any
 * request. Only a local file is read: a URL is refused (aicr never fetches a config; an air-gapped
 * host behaves the same).
 */
import * as v from "valibot";
import { AicrError } from "../core/errors.ts";
import { INPUT_LIMITS, readInputText, yamlErrorAt } from "../core/input-file.ts";
import { nearest } from "../core/suggest.ts";
import { parseYamlDocument } from "../core/yaml.ts";
import { issueMessage } from "../snapshot/schema.ts";
import type { ParsedArgv } from "./_argv.ts";
import { at, type ConfigEntry, configGroup, mapConfigEntries } from "./_config-flags.ts";
import type { FlagSpecs } from "./_flag-spec.ts";
import { mergeUnder } from "./_flags.ts";

const isMap = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);

export const CONFIG_API_VERSION = "aicr.run/v1";
export const CONFIG_KIND = "AICRConfig";
/** Largest config file read: it holds flag values only. */
export const CONFIG_MAX_BYTES = INPUT_LIMITS.config;

const Section = v.nullish(
  v.custom<Record<string, unknown>>((x) => isMap(x), "expected a map of flag names to values"),
);
const TOP_KEYS = ["apiVersion", "kind", "metadata", "spec"];
const SPEC_KEYS = ["snapshot", "validate"];

const ConfigSchema = v.strictObject(
  {
    apiVersion: v.literal(CONFIG_API_VERSION, `expected "${CONFIG_API_VERSION}"`),
    kind: v.literal(CONFIG_KIND, `expected "${CONFIG_KIND}"`),
    metadata: v.optional(v.record(v.string(), v.unknown(), "expected a map")),
    spec: v.strictObject(
      Object.fromEntries(SPEC_KEYS.map((k) => [k, v.optional(Section)])) as Record<
        "snapshot" | "validate",
        v.OptionalSchema<typeof Section, undefined>
      >,
      "expected a map with snapshot and/or validate",
    ),
  },
  `expected an AICRConfig document (apiVersion: ${CONFIG_API_VERSION}, kind: ${CONFIG_KIND}, spec)`,
);

const REMEDY = "fix the listed keys (examples/aicr-config.yaml lists every key)";

function issueText(issue: v.BaseIssue<unknown>): string {
  const keys = (issue.path ?? []).map((p) => String(p.key));
  const path = keys.length ? keys.reduce((out, k) => (out ? at(out, k) : k), "") : "(document)";
  if (issue.expected === "never" && keys.length) {
    const guess = nearest(keys.at(-1) ?? "", keys.length === 1 ? TOP_KEYS : SPEC_KEYS);
    return `${path}: unknown key${guess ? `: did you mean "${guess}"?` : ""}`;
  }
  if (keys.length && issue.received === "undefined") return `${path}: required but missing`;
  return `${path}: ${issueMessage(issue)}`;
}

const refuse = (file: string, message: string, remedy: string, cause?: unknown) =>
  new AicrError("INVALID_REQUEST", `--config ${JSON.stringify(file)}: ${message}`, {
    remedy,
    cause,
    context: { flag: "--config", path: file },
  });

const CONFIG_INPUT = {
  flag: "--config",
  what: "an AICRConfig file",
  maxBytes: CONFIG_MAX_BYTES,
  remedy: "pass the path of an AICRConfig file (see examples/aicr-config.yaml)",
};

/** The file's text: a regular, readable file of at most 1 MiB, UTF-8 (core/input-file.ts). */
export function readConfigFile(file: string): string {
  if (file === "") throw refuse(file, "expected a file path", "write --config <file>");
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(file))
    throw refuse(
      file,
      "a URL; aicr reads a config only from a local file",
      "download it first and pass the file: aicr never fetches a config, so a run behaves the same on an air-gapped host",
    );
  return readInputText(file, CONFIG_INPUT);
}

/** The entries of `spec.<command>`: its own keys and those of its groups (agent, input), by path. */
export function configEntries(
  command: string,
  text: string,
  file: string,
): { entries: ConfigEntry[]; problems: string[] } {
  let raw: unknown;
  try {
    raw = parseYamlDocument(text);
  } catch (err) {
    // the position alone: the parser's message quotes the file
    throw refuse(file, `not valid YAML or JSON ${yamlErrorAt(err)}`, "fix the syntax at the position shown");
  }
  // valibot takes a list for a map: a document that is not a map is refused here.
  // A map with none of the envelope's keys is not a config (a file given by mistake): its keys are
  // not listed back.
  const result =
    isMap(raw) && TOP_KEYS.some((k) => Object.hasOwn(raw, k)) ? v.safeParse(ConfigSchema, raw) : undefined;
  const problems = !result
    ? [
        `(document): expected an AICRConfig document (apiVersion: ${CONFIG_API_VERSION}, kind: ${CONFIG_KIND}, spec)`,
      ]
    : result.success
      ? []
      : result.issues.map(issueText);
  // The section is read even when the envelope has problems elsewhere: every problem is told at once.
  const spec = isMap(raw) && isMap(raw.spec) ? raw.spec : {};
  const section = isMap(spec[command]) ? spec[command] : undefined;
  const entries: ConfigEntry[] = [];
  const base = `spec.${command}`;
  for (const [key, value] of Object.entries(section ?? {})) {
    // own keys only: a key named like a built-in (constructor, __proto__) is an unknown key
    const allowed = configGroup(command, key);
    if (allowed === undefined) {
      entries.push({ path: at(base, key), key, value });
      continue;
    }
    const path = at(base, key);
    if (value === null || value === undefined) continue;
    if (!isMap(value)) {
      problems.push(`${path}: expected a map of flag names to values`);
      continue;
    }
    for (const [inner, innerValue] of Object.entries(value)) {
      if (allowed !== "any" && !allowed.includes(inner)) {
        const guess = nearest(inner, allowed);
        problems.push(
          `${at(path, inner)}: unknown key (${key} takes ${allowed.join(", ")})${guess ? `: did you mean "${guess}"?` : ""}`,
        );
        continue;
      }
      entries.push({ path: at(path, inner), key: inner, value: innerValue });
    }
  }
  return { entries, problems };
}

const invalid = (file: string, problems: string[]) =>
  new AicrError(
    "INVALID_REQUEST",
    `config ${JSON.stringify(file)} is invalid: ${problems.length} problem(s):\n  ${problems.join("\n  ")}`,
    { remedy: REMEDY, context: { flag: "--config", path: file, problems } },
  );

/**
 * The config's values merged under what argv gave (the command line wins); `command` names the
 * section. Every problem of the file is told at once, a value the command line overrides included.
 */
export function applyConfigText(
  command: string,
  parsed: ParsedArgv,
  args: FlagSpecs,
  text: string,
  file: string,
): ParsedArgv {
  const read = configEntries(command, text, file);
  const mapped = mapConfigEntries(command, read.entries, args, new Set(parsed.values.keys()));
  const problems = [...read.problems, ...mapped.problems];
  if (problems.length) throw invalid(file, problems);
  return mergeUnder(parsed, mapped.values);
}

/** `--config` read and applied (see applyConfigText); what argv gave, unchanged, when the flag is absent. */
export function applyConfigFile(command: string, parsed: ParsedArgv, args: FlagSpecs): ParsedArgv {
  const files = (parsed.values.get("config") ?? []).map(String);
  if (files.length === 0) return parsed;
  if (files.length > 1)
    throw new AicrError("INVALID_REQUEST", `--config given ${files.length} times`, {
      remedy: "pass one config file; flags on the command line override its values",
      context: { flag: "--config", values: files },
    });
  const file = files[0] ?? "";
  return applyConfigText(command, parsed, args, readConfigFile(file), file);
}

import { MAX_TIMER_MS } from "../core/deadline.ts";
import { AicrError } from "../core/errors.ts";
import { dns1123SubdomainProblems } from "../core/names.ts";
import type { Toleration } from "../deployer/job-spec.ts";

/** Small parsers for flag values; each error names the flag, quotes the value and shows the form. */

export function badFlag(flag: string, value: string, expected: string, remedy?: string): AicrError {
  return new AicrError("INVALID_REQUEST", `invalid ${flag} ${JSON.stringify(value)}: expected ${expected}`, {
    remedy: remedy ?? `fix ${flag} and run again`,
    context: { field: flag, value },
  });
}

const UNITS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** Go-style durations: `5m`, `90s`, `1h30m`, `500ms`. */
export function parseDuration(flag: string, value: string): number {
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  const joined = parts.map((p) => p[0]).join("");
  if (value === "" || joined !== value) throw badFlag(flag, value, "a duration such as 5m, 90s or 1h30m");
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * (UNITS[p[2] ?? "s"] ?? 0), 0);
  if (ms <= 0) throw badFlag(flag, value, "a duration greater than zero");
  if (ms > MAX_TIMER_MS)
    throw badFlag(flag, value, "a duration of at most 596h (about 24 days, the longest timer aicr can keep)");
  return ms;
}

const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/** A qualified name: `[prefix/]name` as label keys and resource names are written. */
export function qualifiedNameProblem(key: string): string | undefined {
  const slash = key.lastIndexOf("/");
  const prefix = slash >= 0 ? key.slice(0, slash) : "";
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (slash >= 0 && (prefix === "" || dns1123SubdomainProblems(prefix).length > 0))
    return "the prefix before '/' must be a DNS subdomain";
  if (name.length === 0 || name.length > 63 || !LABEL_NAME.test(name))
    return "the name must be 1-63 letters, digits, '-', '_' or '.'";
  return undefined;
}

export function parseKeyValue(flag: string, value: string): [string, string] {
  const eq = value.indexOf("=");
  const key = eq >= 0 ? value.slice(0, eq) : "";
  const val = eq >= 0 ? value.slice(eq + 1) : "";
  const problem =
    eq < 0
      ? "no '='"
      : (qualifiedNameProblem(key) ??
        (val.length > 63 || !LABEL_VALUE.test(val) ? "a bad label value" : undefined));
  if (problem)
    throw badFlag(
      flag,
      value,
      `key=value with a valid label key and value (${problem})`,
      `e.g. ${flag} nvidia.com/gpu.present=true`,
    );
  return [key, val];
}

const EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/** `key=value:effect` (Equal) or `key:effect` (Exists). */
export function parseToleration(flag: string, value: string): Toleration {
  const colon = value.lastIndexOf(":");
  const effect = colon >= 0 ? value.slice(colon + 1) : "";
  const head = colon >= 0 ? value.slice(0, colon) : value;
  const eq = head.indexOf("=");
  const key = eq >= 0 ? head.slice(0, eq) : head;
  const val = eq >= 0 ? head.slice(eq + 1) : undefined;
  const ok =
    EFFECTS.includes(effect) &&
    qualifiedNameProblem(key) === undefined &&
    (val === undefined || LABEL_VALUE.test(val));
  if (!ok)
    throw badFlag(
      flag,
      value,
      `key=value:effect or key:effect, effect one of ${EFFECTS.join(", ")}`,
      `e.g. ${flag} nvidia.com/gpu:NoSchedule`,
    );
  return val === undefined
    ? { key, operator: "Exists", effect }
    : { key, operator: "Equal", value: val, effect };
}

const QUANTITY = /^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE])?$/;

/** The resource names Kubernetes takes without a domain; any other is `<domain>/<name>` (nvidia.com/gpu). */
const STANDARD_RESOURCES = ["cpu", "memory", "ephemeral-storage"];

/**
 * Why a container resource name is not one the apiserver takes, if it is not: `cpu`, `memory`,
 * `ephemeral-storage`, `hugepages-<size>`, or a domain-qualified name (an extended resource).
 */
export function resourceNameProblem(name: string): string | undefined {
  const problem = qualifiedNameProblem(name);
  if (problem) return problem;
  if (name.includes("/") || STANDARD_RESOURCES.includes(name) || /^hugepages-./.test(name)) return undefined;
  return `a name without a domain must be ${STANDARD_RESOURCES.join(", ")} or hugepages-<size>; others are <domain>/<name>, e.g. nvidia.com/gpu`;
}

/** `name=quantity,…` as `--requests cpu=2,memory=8Gi`. */
export function parseResourceList(flag: string, value: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of value.split(",")) {
    const eq = item.indexOf("=");
    const name = eq >= 0 ? item.slice(0, eq).trim() : "";
    const qty = eq >= 0 ? item.slice(eq + 1).trim() : "";
    const named = name ? resourceNameProblem(name) : undefined;
    if (name && named && QUANTITY.test(qty) && qualifiedNameProblem(name) === undefined)
      throw badFlag(
        flag,
        value,
        `name=quantity pairs with resource names the apiserver takes (${JSON.stringify(name)}: ${named})`,
        `check the item ${JSON.stringify(item)}`,
      );
    if (!name || named || !QUANTITY.test(qty)) {
      throw badFlag(
        flag,
        value,
        "name=quantity pairs separated by commas, e.g. cpu=2,memory=8Gi",
        `check the item ${JSON.stringify(item)}`,
      );
    }
    out[name] = qty;
  }
  return out;
}

export function parseCount(flag: string, value: string): number {
  if (!/^[0-9]+$/.test(value)) throw badFlag(flag, value, "a whole number ≥ 0");
  return Number(value);
}

export function parseBool(flag: string, value: string | boolean | undefined, fallback: boolean): boolean {
  if (value === undefined || value === "") return fallback;
  if (typeof value === "boolean") return value;
  if (["true", "1", "yes"].includes(value)) return true;
  if (["false", "0", "no"].includes(value)) return false;
  throw badFlag(flag, value, "true or false");
}

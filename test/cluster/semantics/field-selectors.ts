/** Field selectors as k8s.io/apimachinery/pkg/fields parses them, over the fields the fake supports. */

export interface FieldRequirement {
  field: string;
  operator: "=" | "!=";
  value: string;
}
export type FieldSelector = FieldRequirement[];

export const DEFAULT_FIELDS = ["metadata.name", "metadata.namespace", "status.phase", "spec.nodeName"];

/** Splits on unescaped commas; `\,` `\=` `\\` escapes are honoured as in fields.ParseSelector. */
function splitEscaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "\\" && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === sep) {
      parts.push(cur);
      cur = "";
    } else cur += c;
  }
  parts.push(cur);
  return parts;
}

const unescapeField = (s: string): string => s.replace(/\\(.)/g, "$1");

/** Finds the first unescaped `!=`, `==` or `=`. */
function splitOperator(part: string): [string, "=" | "!=", string] | undefined {
  for (let i = 0; i < part.length; i++) {
    const c = part[i]!;
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "!" && part[i + 1] === "=") return [part.slice(0, i), "!=", part.slice(i + 2)];
    if (c === "=") return [part.slice(0, i), "=", part.slice(part[i + 1] === "=" ? i + 2 : i + 1)];
  }
  return undefined;
}

export function parseFieldSelector(
  s: string,
  supported: readonly string[] = DEFAULT_FIELDS,
  unsupported: (field: string) => string = (field) => `field label not supported: ${field}`,
): FieldSelector {
  const out: FieldSelector = [];
  if (s.trim() === "") return out;
  for (const part of splitEscaped(s, ",")) {
    const split = splitOperator(part);
    if (!split) throw new Error(`invalid selector: '${s}'; can't understand '${part}'`);
    const field = unescapeField(split[0].trim());
    if (!supported.includes(field)) throw new Error(unsupported(field));
    out.push({ field, operator: split[1], value: unescapeField(split[2]) });
  }
  return out;
}

/** Reads a dotted path; absent fields read as "" (so `spec.nodeName=` selects unscheduled pods). */
export function fieldValue(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const seg of path.split(".")) {
    if (cur === null || typeof cur !== "object") return "";
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur === undefined || cur === null ? "" : String(cur);
}

export function matchesFields(sel: FieldSelector, obj: unknown): boolean {
  return sel.every((r) => (fieldValue(obj, r.field) === r.value) === (r.operator === "="));
}

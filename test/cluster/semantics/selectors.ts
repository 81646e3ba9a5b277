/** Label selectors (and a re-export of field selectors), parsed and matched as k8s.io/apimachinery/pkg/labels and /fields do. */
import { validateLabelKey, validateLabelValue } from "./names.ts";

export type LabelOperator = "=" | "!=" | "in" | "notin" | "exists" | "!" | "gt" | "lt";
export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}
export type LabelSelector = LabelRequirement[];

type Tok = { kind: "id" | "op"; text: string };
const SPECIAL = new Set(["!", "=", ">", "<", "(", ")", ","]);

function lex(s: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (SPECIAL.has(c)) {
      const two = s.slice(i, i + 2);
      if (two === "==" || two === "!=") {
        out.push({ kind: "op", text: two });
        i += 2;
      } else {
        out.push({ kind: "op", text: c });
        i++;
      }
      continue;
    }
    let j = i;
    while (j < s.length && !SPECIAL.has(s[j]!) && !/\s/.test(s[j]!)) j++;
    out.push({ kind: "id", text: s.slice(i, j) });
    i = j;
  }
  return out;
}

class Parser {
  private pos = 0;
  constructor(private readonly toks: Tok[]) {}
  peek(): Tok | undefined {
    return this.toks[this.pos];
  }
  next(): Tok | undefined {
    return this.toks[this.pos++];
  }
  fail(found: Tok | undefined, expected: string, prefix = "unable to parse requirement: "): never {
    throw new Error(`${prefix}found '${found?.text ?? ""}', expected: ${expected}`);
  }
  identifier(what: string): string {
    const t = this.next();
    if (t?.kind !== "id") this.fail(t, what);
    return t.text;
  }
  valueSet(): string[] {
    const open = this.next();
    if (open?.text !== "(") this.fail(open, "'('");
    const vals: string[] = [];
    for (;;) {
      const t = this.peek();
      if (t?.kind === "id") {
        vals.push(t.text);
        this.pos++;
      } else if (t?.text === "," || t?.text === ")") {
        // `in (a,,b)` and `in ()` yield empty-string values in the real parser too.
        if (vals.length === 0 || this.toks[this.pos - 1]?.text === ",") vals.push("");
      } else {
        this.fail(t, "',', ')' or identifier");
      }
      const sep = this.next();
      if (sep?.text === ")") return vals;
      if (sep?.text !== ",") this.fail(sep, "',' or ')'");
    }
  }
  requirement(): LabelRequirement {
    if (this.peek()?.text === "!") {
      this.pos++;
      return { key: this.identifier("identifier after '!'"), operator: "!", values: [] };
    }
    const key = this.identifier("identifier");
    const t = this.peek();
    if (t === undefined || t.text === ",") return { key, operator: "exists", values: [] };
    this.pos++;
    const single = (op: LabelOperator): LabelRequirement => {
      const v = this.peek();
      // `key=` (empty value) is legal.
      if (v === undefined || v.text === ",") return { key, operator: op, values: [""] };
      return { key, operator: op, values: [this.identifier("identifier")] };
    };
    if (t.text === "=" || t.text === "==") return single("=");
    if (t.text === "!=") return single("!=");
    if (t.text === ">") return single("gt");
    if (t.text === "<") return single("lt");
    if (t.kind === "id" && t.text === "in") return { key, operator: "in", values: this.valueSet() };
    if (t.kind === "id" && t.text === "notin") return { key, operator: "notin", values: this.valueSet() };
    return this.fail(t, "in, notin, =, ==, !=, gt, lt");
  }
  all(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    if (this.peek() === undefined) return reqs;
    for (;;) {
      reqs.push(this.requirement());
      const t = this.next();
      if (t === undefined) return reqs;
      if (t.text !== ",") this.fail(t, "',' or 'end of string'", "");
    }
  }
}

function validateRequirement(r: LabelRequirement): void {
  const keyErrs = validateLabelKey(r.key);
  if (keyErrs.length > 0)
    throw new Error(`unable to parse requirement: key: Invalid value: "${r.key}": ${keyErrs.join("; ")}`);
  if (r.operator === "gt" || r.operator === "lt") {
    if (r.values.length !== 1 || !/^-?\d+$/.test(r.values[0]!)) {
      throw new Error(
        `unable to parse requirement: values[0]: Invalid value: "${r.values[0]}": for 'Gt', 'Lt' operators, the value must be an integer`,
      );
    }
    return;
  }
  r.values.forEach((v, i) => {
    const errs = validateLabelValue(v);
    if (errs.length > 0)
      throw new Error(
        `unable to parse requirement: values[${i}][${r.key}]: Invalid value: "${v}": ${errs.join("; ")}`,
      );
  });
}

export function parseLabelSelector(s: string): LabelSelector {
  const reqs = new Parser(lex(s)).all();
  for (const r of reqs) validateRequirement(r);
  return reqs;
}

export function matchesLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return sel.every((r) => {
    const has = Object.hasOwn(l, r.key);
    const v = l[r.key];
    switch (r.operator) {
      case "=":
        return has && v === r.values[0];
      case "!=":
        return !has || v !== r.values[0];
      case "in":
        return has && r.values.includes(v!);
      case "notin":
        return !has || !r.values.includes(v!);
      case "exists":
        return has;
      case "!":
        return !has;
      case "gt":
      case "lt": {
        if (!has || !/^-?\d+$/.test(v!)) return false;
        const n = Number(v);
        const want = Number(r.values[0]);
        return r.operator === "gt" ? n > want : n < want;
      }
      default:
        return false;
    }
  });
}

export function formatLabelSelector(sel: LabelSelector): string {
  return sel
    .map((r) => {
      if (r.operator === "exists") return r.key;
      if (r.operator === "!") return `!${r.key}`;
      if (r.operator === "in" || r.operator === "notin")
        return `${r.key} ${r.operator} (${r.values.join(",")})`;
      const op = r.operator === "gt" ? ">" : r.operator === "lt" ? "<" : r.operator;
      return `${r.key}${op}${r.values[0]}`;
    })
    .join(",");
}

export type { FieldRequirement, FieldSelector } from "./field-selectors.ts";
export { DEFAULT_FIELDS, fieldValue, matchesFields, parseFieldSelector } from "./field-selectors.ts";

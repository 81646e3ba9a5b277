/**
 * Constraint value expressions (`">= 1.32.4"`, `"ubuntu"`) and the version comparison they use. Pure.
 */

export const OPERATORS = [">=", "<=", "!=", "==", ">", "<"] as const;
export type Operator = (typeof OPERATORS)[number];

export interface Expression {
  /** Absent: a bare value, matched exactly as a string. */
  op?: Operator | undefined;
  operand: string;
}

/** The operator prefix is checked in the order of OPERATORS, so `>=` is never read as `>`. */
export function parseExpression(value: string): Expression {
  const text = value.trim();
  for (const op of OPERATORS) {
    if (text.startsWith(op)) return { op, operand: text.slice(op.length).trim() };
  }
  return { operand: text };
}

export interface Version {
  /** One to three numeric components. */
  parts: number[];
  /** A `-pre` or `+build` suffix, kept aside: it never takes part in a comparison. */
  suffix: string;
}

const VERSION = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?([-+].*)?$/;

export function parseVersion(text: string): Version | undefined {
  const m = VERSION.exec(text.trim());
  if (!m) return undefined;
  const parts = [m[1], m[2], m[3]].filter((p): p is string => p !== undefined).map(Number);
  return { parts, suffix: m[4] ?? "" };
}

/** Compares only as many components as the less precise side has: `1.32` vs `1.32.9` is equal. */
export function compareVersions(a: Version, b: Version): number {
  const n = Math.min(a.parts.length, b.parts.length);
  for (let i = 0; i < n; i++) {
    const d = (a.parts[i] ?? 0) - (b.parts[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export interface Verdict {
  holds: boolean;
  /** How the two sides were compared. */
  as: "version" | "string";
}

function byOperator(op: Operator, cmp: number): boolean {
  switch (op) {
    case ">=":
      return cmp >= 0;
    case "<=":
      return cmp <= 0;
    case ">":
      return cmp > 0;
    case "<":
      return cmp < 0;
    case "==":
      return cmp === 0;
    case "!=":
      return cmp !== 0;
  }
}

/**
 * Whether `actual` satisfies the expression. Both sides that parse as versions are compared as
 * versions (at the lower precision); anything else is compared as strings. A bare value is an exact
 * string match.
 */
export function evaluate(actual: string, expr: Expression): Verdict {
  const got = actual.trim();
  if (expr.op === undefined) return { holds: got === expr.operand, as: "string" };
  const a = parseVersion(got);
  const b = parseVersion(expr.operand);
  if (a && b) return { holds: byOperator(expr.op, compareVersions(a, b)), as: "version" };
  return { holds: byOperator(expr.op, compareStrings(got, expr.operand)), as: "string" };
}

/** `>= 1.32` as written in a message; a bare value is shown as `== value (exact)`. */
export function describeExpression(expr: Expression): string {
  return expr.op === undefined ? `${expr.operand} (exact match)` : `${expr.op} ${expr.operand}`;
}

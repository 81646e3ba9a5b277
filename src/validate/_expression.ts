import { compareVersions, parseVersion } from "../core/versions.ts";

/**
 * Constraint value expressions (`">= 1.32.4"`, `"ubuntu"`); versions are read and ordered by
 * core/versions.ts (diff shares that reading). Pure.
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

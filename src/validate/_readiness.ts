import { AicrError } from "../core/errors.ts";
import { quoted, visible } from "../core/terminal.ts";
import { nearestPath, readingPaths, readingText } from "../snapshot/readings.ts";
import type { Snapshot } from "../snapshot/schema.ts";
import { describeExpression, evaluate, parseExpression } from "./_expression.ts";
import type { Constraint } from "./recipe.ts";

export type ReadinessStatus = "passed" | "failed" | "missing";

export interface ConstraintResult {
  name: string;
  /** The recipe's expression as written. */
  expected: string;
  /** The snapshot's reading; absent when the snapshot has none. */
  actual?: string | undefined;
  status: ReadinessStatus;
  /** For a missing reading: the nearest path the snapshot does have. */
  suggestion?: string | undefined;
}

/** Evaluates the recipe's top-level constraints against the snapshot. Pure. */
export function evaluateReadiness(
  constraints: readonly Constraint[],
  snapshot: Snapshot,
): ConstraintResult[] {
  let paths: string[] | undefined;
  return constraints.map((c) => {
    const actual = readingText(snapshot, c.name);
    if (actual === undefined) {
      paths ??= readingPaths(snapshot);
      return { name: c.name, expected: c.value, status: "missing", suggestion: nearestPath(c.name, paths) };
    }
    const ok = evaluate(actual, parseExpression(c.value)).holds;
    return { name: c.name, expected: c.value, actual, status: ok ? "passed" : "failed" };
  });
}

/**
 * One line per constraint: what was expected, what the snapshot says. The recipe's and the snapshot's
 * text is made visible (core/terminal.ts; the actual value quoted), so the line stays one line on the
 * operator's terminal whatever a ConfigMap holds.
 */
export function describeResult(r: ConstraintResult): string {
  const name = visible(r.name);
  const expected = visible(describeExpression(parseExpression(r.expected)));
  if (r.status === "missing") {
    const hint = r.suggestion ? `; did you mean ${visible(r.suggestion)}?` : "";
    return `${name}: expected ${expected}, actual: no such reading in the snapshot${hint}`;
  }
  return `${name}: expected ${expected}, actual ${quoted(r.actual ?? "")}`;
}

/** Whether a result blocks the run: a missing reading cannot be shown to hold, unless allowed. */
export const blocks = (r: ConstraintResult, allowMissing: boolean): boolean =>
  r.status === "failed" || (r.status === "missing" && !allowMissing);

/** INVALID_REQUEST listing every blocking constraint, or undefined when readiness holds. */
export function readinessError(
  results: readonly ConstraintResult[],
  allowMissing: boolean,
): AicrError | undefined {
  const bad = results.filter((r) => blocks(r, allowMissing));
  if (bad.length === 0) return undefined;
  const missingOnly = bad.every((r) => r.status === "missing");
  return new AicrError(
    "INVALID_REQUEST",
    `readiness failed: ${bad.length} of ${results.length} constraint(s) do not hold, so nothing was deployed:\n  ${bad.map(describeResult).join("\n  ")}`,
    {
      remedy: missingOnly
        ? "fix the constraint names (see the suggestions), or pass --allow-missing to let absent readings pass"
        : "bring the cluster to the recipe's requirements, or use a recipe that matches this cluster",
      context: { failed: bad.map((r) => r.name) },
    },
  );
}

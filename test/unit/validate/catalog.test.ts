import { expect, test } from "bun:test";
import type { AicrError } from "../../../src/core/errors.ts";
import { planChecks } from "../../../src/validate/_catalog.ts";
import { parseRecipe } from "../../../src/validate/recipe.ts";

const recipe = (checks: string, phase = "deployment") =>
  parseRecipe(`kind: RecipeMetadata\nspec:\n  validation:\n    ${phase}:\n      checks: [${checks}]\n`, "r");

test("declared checks resolve to built-in validators of their phase, skips marked", () => {
  const plan = planChecks(recipe("operator-health, expected-resources"), {
    phases: ["deployment"],
    skip: ["expected-resources"],
  });
  expect(plan).toEqual([
    { phase: "deployment", name: "operator-health", skipped: false },
    { phase: "deployment", name: "expected-resources", skipped: true },
  ]);
  expect(planChecks(recipe("operator-health"), { phases: ["performance"], skip: [] })).toEqual([]);
});

test("every offender is listed at once: unknown checks, wrong phase, unknown --skip-check", () => {
  try {
    planChecks(recipe("operator-health, nccl-all-reduce-bw, check-nvidia-smi"), {
      phases: ["deployment"],
      skip: ["nope"],
    });
    throw new Error("expected a rejection");
  } catch (err) {
    expect((err as AicrError).exitCode).toBe(2);
    expect((err as AicrError).context.offenders).toEqual([
      'spec.validation.deployment.checks[1]: "nccl-all-reduce-bw" is not a built-in validator',
      'spec.validation.deployment.checks[2]: "check-nvidia-smi" is not a built-in validator',
      '--skip-check "nope": the recipe declares no such check',
    ]);
  }
  expect(() =>
    planChecks(recipe("operator-health", "conformance"), { phases: ["conformance"], skip: [] }),
  ).toThrow(/belongs to phase deployment/);
});

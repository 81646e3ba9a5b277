import { expect, test } from "bun:test";
import { planChecks } from "../../../src/validate/_catalog.ts";
import { parseRecipe } from "../../../src/validate/recipe.ts";
import { thrown } from "../../support/reject.ts";

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
  const err = thrown(() =>
    planChecks(recipe("operator-health, nccl-all-reduce-bw, check-nvidia-smi"), {
      phases: ["deployment"],
      skip: ["nope"],
    }),
  );
  expect(err.exitCode).toBe(2);
  expect(err.context.offenders).toEqual([
    'spec.validation.deployment.checks[1]: "nccl-all-reduce-bw" is not a built-in validator',
    '--skip-check "nope": the recipe declares no such check',
  ]);
  expect(err.remedy).toContain("--skip-check nccl-all-reduce-bw");
  expect(() =>
    planChecks(recipe("operator-health", "conformance"), { phases: ["conformance"], skip: [] }),
  ).toThrow(/belongs to phase deployment/);
});

/** The H100 overlay's shape (facts §8.1): four deployment checks, one performance check this build lacks. */
const h100 = parseRecipe(
  "kind: RecipeMetadata\nspec:\n  validation:\n    deployment:\n      checks: [operator-health, expected-resources, gpu-operator-version, check-nvidia-smi]\n    performance:\n      checks: [nccl-all-reduce-bw]\n",
  "h100",
);

test("the H100 overlay: refused while nccl-all-reduce-bw is unknown, with --skip-check as the remedy", () => {
  const err = thrown(() =>
    planChecks(h100, { phases: ["deployment", "performance", "conformance"], skip: [] }),
  );
  expect(err.exitCode).toBe(2);
  expect(err.context.offenders).toEqual([
    'spec.validation.performance.checks[0]: "nccl-all-reduce-bw" is not a built-in validator',
  ]);
  expect(err.remedy).toContain("--skip-check <name> (here: --skip-check nccl-all-reduce-bw)");
});

test("the H100 overlay with --skip-check nccl-all-reduce-bw: all four deployment checks run, the unknown one is skipped", () => {
  const plan = planChecks(h100, {
    phases: ["deployment", "performance", "conformance"],
    skip: ["nccl-all-reduce-bw"],
  });
  expect(plan).toEqual([
    { phase: "deployment", name: "operator-health", skipped: false },
    { phase: "deployment", name: "expected-resources", skipped: false },
    { phase: "deployment", name: "gpu-operator-version", skipped: false },
    { phase: "deployment", name: "check-nvidia-smi", skipped: false },
    { phase: "performance", name: "nccl-all-reduce-bw", skipped: true },
  ]);
});

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
    planChecks(recipe("operator-health, nccl-all-reduce-bw, no-such-check, check-nvidia-smi"), {
      phases: ["deployment"],
      skip: ["nope"],
    }),
  );
  expect(err.exitCode).toBe(2);
  expect(err.context.offenders).toEqual([
    'spec.validation.deployment.checks[1]: "nccl-all-reduce-bw" belongs to phase performance',
    'spec.validation.deployment.checks[2]: "no-such-check" is not a built-in validator',
    '--skip-check "nope": the recipe declares no such check',
  ]);
  expect(err.remedy).toContain("--skip-check no-such-check");
  expect(() =>
    planChecks(recipe("operator-health", "conformance"), { phases: ["conformance"], skip: [] }),
  ).toThrow(/belongs to phase deployment/);
});

/** The H100 overlay's shape (facts §8.1): four deployment checks, the performance check and its constraint. */
const h100 = parseRecipe(
  'kind: RecipeMetadata\nspec:\n  validation:\n    deployment:\n      checks: [operator-health, expected-resources, gpu-operator-version, check-nvidia-smi]\n    performance:\n      checks: [nccl-all-reduce-bw]\n      constraints:\n        - {name: nccl-all-reduce-bw, value: ">= 300"}\n',
  "h100",
);

test("the H100 overlay: nccl-all-reduce-bw and its plainly named constraint are read; every check is planned", () => {
  const plan = planChecks(h100, { phases: ["deployment", "performance", "conformance"], skip: [] });
  expect(plan.map((c) => `${c.phase}/${c.name}`)).toEqual([
    "deployment/operator-health",
    "deployment/expected-resources",
    "deployment/gpu-operator-version",
    "deployment/check-nvidia-smi",
    "performance/nccl-all-reduce-bw",
  ]);
});

test("a plainly named phase constraint must be one of that phase's checks", () => {
  const bad = parseRecipe(
    'kind: RecipeMetadata\nspec:\n  validation:\n    performance:\n      constraints:\n        - {name: nccl-allreduce, value: ">= 300"}\n    conformance:\n      constraints:\n        - {name: nccl-all-reduce-bw, value: "1"}\n',
    "bad",
  );
  const err = thrown(() => planChecks(bad, { phases: ["performance"], skip: [] }));
  expect(err.exitCode).toBe(2);
  expect(err.context.offenders).toEqual([
    'spec.validation.performance.constraints[0].name: "nccl-allreduce" is not a performance check (its checks: nccl-all-reduce-bw)',
    expect.stringContaining(
      'spec.validation.conformance.constraints[0].name: "nccl-all-reduce-bw" is not a conformance check',
    ),
  ]);
  expect(() =>
    parseRecipe(
      "kind: RecipeMetadata\nspec:\n  validation:\n    performance:\n      constraints:\n        - {name: Bad Name, value: x}\n",
      "r",
    ),
  ).toThrow(/or a check's name/);
});

test("the H100 overlay with --skip-check nccl-all-reduce-bw: the four deployment checks run, the withheld one is skipped", () => {
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

test("every isolated check in the catalog has its code in the registry, and the registry nothing else", async () => {
  const { CHECK_RUNS } = await import("../../../src/validate/checks/registry.ts");
  const { VALIDATORS } = await import("../../../src/validate/_catalog.ts");
  expect(Object.keys(CHECK_RUNS).sort()).toEqual(
    VALIDATORS.filter((v) => v.isolated)
      .map((v) => v.name)
      .sort(),
  );
  for (const load of Object.values(CHECK_RUNS)) expect(typeof (await load())).toBe("function");
});

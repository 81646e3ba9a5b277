import { describe, expect, test } from "bun:test";
import { declaredPhases, parseRecipe, phaseConstraint } from "../../../src/validate/recipe.ts";
import { thrown } from "../../support/reject.ts";

const problems = (text: string): string[] => {
  const err = thrown(() => parseRecipe(text, "r.yaml"));
  expect(err.exitCode).toBe(2);
  return err.context.problems as string[];
};

describe("parseRecipe", () => {
  test("reads the sample shape; numbers and booleans become their text", () => {
    const r = parseRecipe(
      `kind: RecipeMetadata
spec:
  constraints:
    - {name: OS.release.VERSION_ID, value: "24.04"}
    - {name: GPU.hardware.gpu-present, value: true}
    - {name: "OS.sysctl./proc/sys/kernel/osrelease", value: ">= 6.8"}
  validation:
    deployment:
      checks: [operator-health]
      constraints: [{name: Deployment.gpu-operator.version, value: ">= v24.6.0"}]
`,
      "r.yaml",
    );
    expect(r.spec.constraints.map((c) => c.value)).toEqual(["24.04", "true", ">= 6.8"]);
    expect(declaredPhases(r)).toEqual(["deployment"]);
    expect(phaseConstraint(r, "deployment", "Deployment.gpu-operator.version")).toBe(">= v24.6.0");
    expect(phaseConstraint(r, "deployment", "Other")).toBeUndefined();
  });

  test("every error names its path", () => {
    expect(
      problems(`kind: RecipeMetadata
spec:
  contraints: []
  constraints:
    - {name: K8s.server, value: "1"}
    - {name: Foo.a.b, value: "1"}
    - {name: OS.release.ID}
    - {name: OS.release.ID, value: "", extra: 1}
  validation:
    deploy: {}
    performance: {checks: [""]}
`),
    ).toEqual([
      "spec.constraints[0].name: expected <Type>.<subtype>.<key>, e.g. K8s.server.version",
      'spec.constraints[1].name: unknown measurement type "Foo"; expected one of K8s, GPU, OS, SystemD, NodeTopology, NetworkTopology',
      "spec.constraints[2].value: required but missing",
      "spec.constraints[3].value: expected a non-empty value",
      "spec.constraints[3].extra: unknown key",
      "spec.validation.performance.checks[0]: expected a check name",
      "spec.validation.deploy: unknown key",
      "spec.contraints: unknown key",
    ]);
  });

  test("the wrong kind and YAML syntax errors are INVALID_REQUEST", () => {
    expect(problems("kind: Snapshot\nspec: {}\n")).toEqual(['kind: expected "RecipeMetadata"']);
    expect(() => parseRecipe("kind: [", "r.yaml")).toThrow(/not valid YAML/);
  });
});

import { expect, test } from "bun:test";
import { parse, parseAllDocuments } from "yaml";
import { mergeRules, renderValidateRbac } from "../../../src/validate/rbac-render.ts";
import { parseRecipe } from "../../../src/validate/recipe.ts";

const RUN = "20261202-120000-0123456789abcdef";
const recipe = parseRecipe(
  [
    "kind: RecipeMetadata",
    "spec:",
    "  componentRefs:",
    "    - name: x",
    "      namespace: x",
    "      expectedResources: [{kind: Secret, name: x-token, namespace: x}]",
    "  validation:",
    "    deployment: {checks: [operator-health]}",
    "    conformance: {checks: [dra-support, platform-health]}",
  ].join("\n"),
  "r.yaml",
);

test("the caller's ClusterRole, the shared validator role, and one file per isolated check; the same input, the same bytes", () => {
  const a = renderValidateRbac({ recipe, recipeSource: "r.yaml", namespace: "aicr-validation", runId: RUN });
  const b = renderValidateRbac({ recipe, recipeSource: "r.yaml", namespace: "aicr-validation", runId: RUN });
  expect(a).toEqual(b);
  expect(a.directory).toBe(`validate-rbac-${RUN}`);
  expect(a.files.map((f) => f.file)).toEqual([
    "caller.yaml",
    "validator.yaml",
    "dra-support.yaml",
    "platform-health.yaml",
  ]);
  const caller = parse(a.files[0]?.content ?? "") as {
    rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
  };
  const can = (group: string, resource: string, verb: string) =>
    caller.rules.some(
      (r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb),
    );
  // what the run grants, the caller must hold: the DRA probe's claims, the platform check's one Secret
  expect(can("resource.k8s.io", "resourceclaims", "create")).toBe(true);
  expect(can("", "namespaces", "create")).toBe(true);
  expect(caller.rules.some((r) => r.resources.includes("*"))).toBe(false);
  const platform = parseAllDocuments(a.files[3]?.content ?? "").map((d) => d.toJS());
  const secretRule = platform[0].rules.find((r: { resources: string[] }) => r.resources.includes("secrets"));
  expect(secretRule).toEqual({
    apiGroups: [""],
    resources: ["secrets"],
    verbs: ["get"],
    resourceNames: ["x-token"],
  });
});

test("mergeRules: one rule per group and resource (and names), verbs once, sorted", () => {
  expect(
    mergeRules([
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["list", "get"] },
      { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "create"] },
      { apiGroups: [""], resources: ["secrets"], verbs: ["get"], resourceNames: ["b", "a"] },
    ]),
  ).toEqual([
    { apiGroups: [""], resources: ["secrets"], verbs: ["get"], resourceNames: ["a", "b"] },
    { apiGroups: ["apps"], resources: ["deployments"], verbs: ["create", "get", "list"] },
  ]);
});

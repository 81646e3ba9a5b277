import { expect, test } from "bun:test";
import type { Snapshot } from "../../../src/snapshot/schema.ts";
import { versionSkew } from "../../../src/validate/_skew.ts";
import { parseRecipe } from "../../../src/validate/recipe.ts";

const recipe = (version?: string) =>
  parseRecipe(`kind: RecipeMetadata\n${version ? `metadata: {version: "${version}"}\n` : ""}spec: {}\n`, "r");
const snapshot = (version: string) => ({ metadata: { version } }) as unknown as Snapshot;

test("no warning when the versions named agree (a leading v is the same version)", () => {
  expect(versionSkew(recipe("v0.1.0"), snapshot("0.1.0"), "0.1.0")).toBeUndefined();
  expect(versionSkew(recipe(), snapshot("v0.1.0"), "0.1.0")).toBeUndefined();
});

test("a warning naming each version when they differ", () => {
  const skew = versionSkew(recipe("v0.11.1"), snapshot("0.1.0"), "0.1.0");
  expect(skew?.fields).toEqual({ recipe: "v0.11.1", snapshot: "0.1.0", aicr: "0.1.0" });
  expect(skew?.message).toStartWith("version skew: recipe v0.11.1, snapshot 0.1.0, aicr 0.1.0");
});

/**
 * The version-skew warning: the recipe's, the snapshot's and this binary's versions, when more than
 * one distinct version is named among them (advisory: the run goes on). Pure.
 */
import type { Snapshot } from "../snapshot/schema.ts";
import type { Recipe } from "./recipe.ts";

const bare = (v: string): string => v.trim().replace(/^v/i, "");

/** The warning's text and fields, or undefined when the versions agree (or only one is known). */
export function versionSkew(
  recipe: Recipe,
  snapshot: Snapshot,
  binary: string,
): { message: string; fields: Record<string, string> } | undefined {
  const recipeVersion = recipe.metadata?.version;
  const named: Record<string, string> = {
    ...(typeof recipeVersion === "string" && recipeVersion.trim() !== "" ? { recipe: recipeVersion } : {}),
    ...(snapshot.metadata.version?.trim() ? { snapshot: snapshot.metadata.version } : {}),
    ...(binary.trim() !== "" ? { aicr: binary } : {}),
  };
  if (new Set(Object.values(named).map(bare)).size <= 1) return undefined;
  const list = Object.entries(named)
    .map(([what, v]) => `${what} ${v}`)
    .join(", ");
  return {
    message: `version skew: ${list}; checks and readings may differ between versions (use a recipe and snapshot made by this aicr to rule it out)`,
    fields: named,
  };
}

/** The three non-apply patch types, over plain objects. */
import { jsonPatch } from "./json-patch.ts";
import type { KObject } from "./objects.ts";
import { jsonMergePatch, strategicMergePatch } from "./semantics/patch.ts";

export type PatchType = "merge" | "strategic" | "json";

export function applyPatchType(type: PatchType, live: KObject, patch: unknown): KObject {
  if (type === "merge") return jsonMergePatch(live, patch) as KObject;
  if (type === "strategic") return strategicMergePatch(live, patch) as KObject;
  return jsonPatch(live, patch) as KObject;
}

/**
 * JSON merge patch (RFC 7386) and a strategic merge patch without OpenAPI schemas: the merge keys of the
 * well-known core/v1 lists are keyed by field name (see MERGE_KEYS), every other list is replaced.
 */

export type { ApplyOptions, ManagedFieldsEntry } from "./apply.ts";
export { ApplyConflictError, serverSideApply, trackUpdate } from "./apply.ts";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const clone = <T>(v: T): T => structuredClone(v);

export function jsonMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return clone(patch);
  const out: Obj = isObj(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = jsonMergePatch(out[k], v);
  }
  return out;
}

/**
 * Lists merged by key, identified only by their field name (the real patch reads patchMergeKey from the
 * schema of the object's kind; a same-named field elsewhere would be merged here too).
 */
export const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: "name",
  initContainers: "name",
  ephemeralContainers: "name",
  env: "name",
  volumes: "name",
  volumeMounts: "mountPath",
  ports: "containerPort",
  imagePullSecrets: "name",
  ownerReferences: "uid",
  conditions: "type",
};

/** Primitive lists with patchStrategy "merge": set union, in order. */
const PRIMITIVE_MERGE_LISTS = new Set(["finalizers"]);

function mergeKeyedList(field: string, key: string, live: unknown[], patch: unknown[]): unknown[] {
  const out = clone(live);
  for (const item of patch) {
    if (!isObj(item)) {
      out.push(clone(item));
      continue;
    }
    const idx = out.findIndex((x) => isObj(x) && x[key] === item[key]);
    if (item.$patch === "delete") {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = strategicMergePatch(out[idx], item, field);
    else out.push(strategicMergePatch({}, item, field));
  }
  return out;
}

// Simplification: $setElementOrder directives are ignored and $retainKeys applies to maps only.
export function strategicMergePatch(target: unknown, patch: unknown, _field = ""): unknown {
  if (!isObj(patch)) return clone(patch);
  if (patch.$patch === "replace") {
    const { $patch: _, ...rest } = patch;
    return clone(rest);
  }
  if (patch.$patch === "delete") return undefined;
  const out: Obj = isObj(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === "$patch" || k === "$retainKeys") continue;
    const deleteFrom = /^\$deleteFromPrimitiveList\/(.+)$/.exec(k);
    if (deleteFrom) {
      const f = deleteFrom[1]!;
      if (Array.isArray(out[f]) && Array.isArray(v))
        out[f] = (out[f] as unknown[]).filter((x) => !v.includes(x));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    const key = MERGE_KEYS[k];
    if (Array.isArray(v) && key !== undefined) {
      out[k] = mergeKeyedList(k, key, Array.isArray(out[k]) ? (out[k] as unknown[]) : [], v);
    } else if (Array.isArray(v) && PRIMITIVE_MERGE_LISTS.has(k)) {
      const cur = Array.isArray(out[k]) ? (out[k] as unknown[]) : [];
      out[k] = [...cur, ...v.filter((x) => !cur.includes(x))];
    } else if (isObj(v)) {
      const merged = strategicMergePatch(out[k], v, k);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    } else {
      out[k] = clone(v);
    }
    if (Array.isArray(patch.$retainKeys)) {
      for (const existing of Object.keys(out))
        if (!(patch.$retainKeys as string[]).includes(existing)) delete out[existing];
    }
  }
  return out;
}

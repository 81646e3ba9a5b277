/** What an update may change, and the rules the registry enforces on it. */
import { invalid } from "./errors.ts";
import { clone, type KObject } from "./objects.ts";
import type { ResourceType } from "./resources.ts";

/** A main update changes spec and metadata; the status subresource changes only status. */
export function mergeForUpdate(r: ResourceType, old: KObject, next: KObject, subresource?: string): KObject {
  let out: KObject;
  if (subresource === "status") {
    out = { ...clone(old), status: next.status };
  } else {
    out = { ...next, apiVersion: old.apiVersion, kind: old.kind };
    if (r.subresources.includes("status")) out.status = clone(old.status);
    if (out.status === undefined) delete out.status;
  }
  const m = out.metadata;
  m.uid = old.metadata.uid;
  m.creationTimestamp = old.metadata.creationTimestamp;
  m.name = old.metadata.name;
  if (old.metadata.namespace) m.namespace = old.metadata.namespace;
  if (old.metadata.generation === undefined) delete m.generation;
  else m.generation = old.metadata.generation;
  for (const k of ["deletionTimestamp", "deletionGracePeriodSeconds"] as const) {
    if (old.metadata[k] !== undefined) (m as Record<string, unknown>)[k] = old.metadata[k];
    else delete m[k];
  }
  if (r.generation && subresource !== "status" && specChanged(old, out))
    m.generation = (old.metadata.generation ?? 1) + 1;
  return out;
}

function specChanged(a: KObject, b: KObject): boolean {
  const strip = (o: KObject) => JSON.stringify({ ...o, metadata: undefined, status: undefined });
  return strip(a) !== strip(b);
}

/** The same JSON apart from resourceVersion (key order and undefined members do not count). */
export function isNoop(old: KObject, next: KObject): boolean {
  const norm = (o: KObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return jsonEqual(norm(old), norm(next));
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    // JSON writes an undefined element as null.
    return a.every((x, i) => jsonEqual(x ?? null, b[i] ?? null));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = Object.keys(ra).filter((k) => ra[k] !== undefined);
  if (keys.length !== Object.keys(rb).filter((k) => rb[k] !== undefined).length) return false;
  return keys.every((k) => jsonEqual(ra[k], rb[k]));
}

/** Once deletion started, finalizers may only be removed. */
export function validateFinalizers(r: ResourceType, old: KObject, next: KObject): void {
  if (!old.metadata.deletionTimestamp) return;
  const before = new Set(old.metadata.finalizers ?? []);
  const added = (next.metadata.finalizers ?? []).filter((f) => !before.has(f));
  if (added.length === 0) return;
  const list = `[]string{${added.map((f) => JSON.stringify(f)).join(", ")}}`;
  throw invalid(r, old.metadata.name!, [
    {
      reason: "FieldValueForbidden",
      message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${list}`,
      field: "metadata.finalizers",
    },
  ]);
}

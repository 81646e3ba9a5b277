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

export function isNoop(old: KObject, next: KObject): boolean {
  const norm = (o: KObject) =>
    JSON.stringify(sortKeys({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } }));
  return norm(old) === norm(next);
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, x]) => [k, sortKeys(x)]),
  );
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

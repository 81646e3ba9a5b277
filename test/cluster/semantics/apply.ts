/**
 * Server-side apply for ConfigMaps: per-manager ownership of data/binaryData keys, metadata labels and
 * annotations, and `immutable`, recorded in metadata.managedFields (FieldsV1) and checked for conflicts.
 */

import { ApplyConflictError, type FieldConflict } from "./apply-conflict.ts";

export { ApplyConflictError, type FieldConflict } from "./apply-conflict.ts";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

// Simplification: one managedFields entry per manager name (the real key is manager+operation+subresource),
// and only map keys are tracked, without the "." entries for the maps themselves.
export interface ManagedFieldsEntry {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  time?: string;
  fieldsType: "FieldsV1";
  fieldsV1: Obj;
}

export interface ApplyOptions {
  fieldManager: string;
  force?: boolean;
  /** RFC 3339 timestamp recorded in managedFields; defaults to now. */
  now?: string;
}

// ---- field sets: paths as [section, key] pairs ----

const MAP_SECTIONS = [["data"], ["binaryData"], ["metadata", "labels"], ["metadata", "annotations"]] as const;

function getMap(obj: Obj | undefined, path: readonly string[]): Obj | undefined {
  let cur: unknown = obj;
  for (const p of path) cur = isObj(cur) ? cur[p] : undefined;
  return isObj(cur) ? cur : undefined;
}

/** Field paths (".data.k", ".metadata.labels.k", ".immutable") an object sets, with their values. */
function fieldsOf(obj: Obj | undefined): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const section of MAP_SECTIONS) {
    for (const [k, v] of Object.entries(getMap(obj, section) ?? {})) out.set(`.${section.join(".")}.${k}`, v);
  }
  if (obj && obj.immutable !== undefined) out.set(".immutable", obj.immutable);
  return out;
}

function toFieldsV1(paths: Iterable<string>): Obj {
  const root: Obj = {};
  for (const p of paths) {
    let cur = root;
    const segs = splitPath(p);
    for (const s of segs) {
      const key = `f:${s}`;
      cur[key] = isObj(cur[key]) ? cur[key] : {};
      cur = cur[key] as Obj;
    }
  }
  return root;
}

function splitPath(p: string): string[] {
  for (const section of MAP_SECTIONS) {
    const prefix = `.${section.join(".")}.`;
    if (p.startsWith(prefix)) return [...section, p.slice(prefix.length)];
  }
  return [p.slice(1)];
}

function fromFieldsV1(f: Obj): Set<string> {
  const out = new Set<string>();
  const walk = (node: Obj, segs: string[]) => {
    const children = Object.keys(node).filter((k) => k.startsWith("f:"));
    if (children.length === 0 && segs.length > 0) {
      const asSection = MAP_SECTIONS.some(
        (s) => s.length === segs.length && s.every((x, i) => x === segs[i]),
      );
      if (!asSection) out.add(`.${segs.join(".")}`);
      return;
    }
    for (const c of children) walk(node[c] as Obj, [...segs, c.slice(2)]);
  };
  walk(f, []);
  return out;
}

function setField(obj: Obj, path: string, value: unknown): void {
  const segs = splitPath(path);
  let cur = obj;
  for (const s of segs.slice(0, -1)) {
    if (!isObj(cur[s])) cur[s] = {};
    cur = cur[s] as Obj;
  }
  cur[segs.at(-1)!] = structuredClone(value);
}

function deleteField(obj: Obj, path: string): void {
  const segs = splitPath(path);
  let cur: unknown = obj;
  for (const s of segs.slice(0, -1)) cur = isObj(cur) ? cur[s] : undefined;
  if (isObj(cur)) delete cur[segs.at(-1)!];
}

function readManagers(live: Obj | undefined): Map<string, ManagedFieldsEntry> {
  const entries = (getMap(live, ["metadata"])?.managedFields ?? []) as ManagedFieldsEntry[];
  return new Map(entries.map((e) => [e.manager, e]));
}

function writeManagers(
  obj: Obj,
  managers: Map<string, ManagedFieldsEntry>,
  owned: Map<string, Set<string>>,
): void {
  const entries: ManagedFieldsEntry[] = [];
  for (const [name, e] of managers) {
    const paths = owned.get(name) ?? new Set();
    if (paths.size > 0) entries.push({ ...e, fieldsV1: toFieldsV1(paths) });
  }
  // The apiserver drops managers whose field set is empty, and the field itself when none is left.
  if (entries.length > 0) (obj.metadata as Obj).managedFields = entries;
  else delete (obj.metadata as Obj).managedFields;
}

const BEFORE_FIRST_APPLY = "before-first-apply";

export function serverSideApply(live: object | undefined, applied: object, opts: ApplyOptions): object {
  const now = opts.now ?? new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  const liveObj = live as Obj | undefined;
  const managers = readManagers(liveObj);
  const liveFields = fieldsOf(liveObj);
  // An object nobody has tracked yet: its fields belong to the apiserver's "before-first-apply" manager.
  if (liveObj && managers.size === 0 && liveFields.size > 0) {
    managers.set(BEFORE_FIRST_APPLY, {
      manager: BEFORE_FIRST_APPLY,
      operation: "Update",
      apiVersion: String(liveObj.apiVersion ?? "v1"),
      fieldsType: "FieldsV1",
      fieldsV1: toFieldsV1(liveFields.keys()),
    });
  }
  const owned = new Map([...managers].map(([n, e]) => [n, fromFieldsV1(e.fieldsV1)]));
  const appliedFields = fieldsOf(applied as Obj);

  const conflicts: FieldConflict[] = [];
  for (const [path, value] of appliedFields) {
    if (!liveFields.has(path) || JSON.stringify(liveFields.get(path)) === JSON.stringify(value)) continue;
    for (const [m, paths] of owned)
      if (m !== opts.fieldManager && paths.has(path)) conflicts.push({ manager: m, field: path });
  }
  if (conflicts.length > 0 && !opts.force) throw new ApplyConflictError(conflicts, managers);
  for (const c of conflicts) owned.get(c.manager)?.delete(c.field);

  const result: Obj = structuredClone(liveObj ?? {});
  for (const [k, v] of Object.entries(applied as Obj)) {
    if (k !== "metadata" && k !== "data" && k !== "binaryData" && k !== "immutable")
      result[k] = structuredClone(v);
  }
  if (!isObj(result.metadata)) result.metadata = {};
  const meta = result.metadata as Obj;
  for (const [k, v] of Object.entries(((applied as Obj).metadata ?? {}) as Obj)) {
    if (k !== "labels" && k !== "annotations" && k !== "managedFields" && meta[k] === undefined) meta[k] = v;
  }
  // Fields this manager applied before and now omits are removed unless another manager still owns them.
  const previously = owned.get(opts.fieldManager) ?? new Set<string>();
  for (const path of previously) {
    if (appliedFields.has(path)) continue;
    const sharedWith = [...owned].some(([m, p]) => m !== opts.fieldManager && p.has(path));
    if (!sharedWith) deleteField(result, path);
  }
  for (const [path, value] of appliedFields) setField(result, path, value);
  owned.set(opts.fieldManager, new Set(appliedFields.keys()));
  managers.set(opts.fieldManager, {
    manager: opts.fieldManager,
    operation: "Apply",
    apiVersion: String((applied as Obj).apiVersion ?? "v1"),
    time: now,
    fieldsType: "FieldsV1",
    fieldsV1: {},
  });
  writeManagers(result, managers, owned);
  return result;
}

/** Records an Update (PUT/PATCH) by `manager`: fields it changed move to it from every other manager. */
export function trackUpdate(old: object | undefined, updated: object, manager: string, now?: string): object {
  const before = fieldsOf(old as Obj | undefined);
  const after = fieldsOf(updated as Obj);
  const managers = readManagers(old as Obj | undefined);
  const owned = new Map([...managers].map(([n, e]) => [n, fromFieldsV1(e.fieldsV1)]));
  const changed = [...after]
    .filter(([p, v]) => JSON.stringify(before.get(p)) !== JSON.stringify(v))
    .map(([p]) => p);
  for (const [p] of before) if (!after.has(p)) for (const set of owned.values()) set.delete(p);
  for (const set of owned.values()) for (const p of changed) set.delete(p);
  const mine = owned.get(manager) ?? new Set<string>();
  for (const p of changed) mine.add(p);
  owned.set(manager, mine);
  const prior = managers.get(manager);
  managers.set(manager, {
    manager,
    operation: prior?.operation === "Apply" ? "Apply" : "Update",
    apiVersion: String((updated as Obj).apiVersion ?? "v1"),
    time: now ?? new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
    fieldsType: "FieldsV1",
    fieldsV1: {},
  });
  const result = structuredClone(updated) as Obj;
  result.metadata ??= {};
  writeManagers(result, managers, owned);
  return result;
}

/** RFC 6902 JSON Patch (add, remove, replace, move, copy, test) over plain JSON. */
import { ApiStatusError } from "./errors.ts";

type Json = unknown;
interface Op {
  op: string;
  path: string;
  value?: Json;
  from?: string;
}

function pointer(path: string): string[] {
  if (path === "") return [];
  if (!path.startsWith("/")) throw invalidPatch(`invalid JSON pointer "${path}"`);
  return path
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function invalidPatch(msg: string): ApiStatusError {
  return new ApiStatusError(422, "Invalid", msg);
}

function parentOf(doc: Json, parts: string[]): [Record<string, Json> | Json[], string] {
  let cur = doc as Record<string, Json>;
  for (const p of parts.slice(0, -1)) {
    const next = Array.isArray(cur) ? cur[Number(p)] : cur?.[p];
    if (next === undefined || next === null || typeof next !== "object")
      throw invalidPatch(`doc is missing path: "/${parts.join("/")}": missing value`);
    cur = next as Record<string, Json>;
  }
  return [cur, parts[parts.length - 1]!];
}

function get(doc: Json, path: string): Json {
  let cur = doc as Record<string, Json>;
  for (const p of pointer(path))
    cur = (Array.isArray(cur) ? cur[Number(p)] : cur?.[p]) as Record<string, Json>;
  return cur;
}

function add(doc: Json, path: string, value: Json): void {
  const [parent, key] = parentOf(doc, pointer(path));
  if (Array.isArray(parent)) parent.splice(key === "-" ? parent.length : Number(key), 0, value);
  else parent[key] = value;
}

function remove(doc: Json, path: string): void {
  const [parent, key] = parentOf(doc, pointer(path));
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else {
    if (!(key in parent)) throw invalidPatch(`Unable to remove nonexistent key: ${key}: missing value`);
    delete parent[key];
  }
}

export function jsonPatch(target: Json, ops: unknown): Json {
  if (!Array.isArray(ops))
    throw new ApiStatusError(400, "BadRequest", "json patch must be a list of operations");
  const doc = structuredClone(target);
  for (const o of ops as Op[]) {
    switch (o.op) {
      case "add":
        add(doc, o.path, structuredClone(o.value));
        break;
      case "remove":
        remove(doc, o.path);
        break;
      case "replace":
        remove(doc, o.path);
        add(doc, o.path, structuredClone(o.value));
        break;
      case "move": {
        const v = get(doc, o.from!);
        remove(doc, o.from!);
        add(doc, o.path, v);
        break;
      }
      case "copy":
        add(doc, o.path, structuredClone(get(doc, o.from!)));
        break;
      case "test":
        if (JSON.stringify(get(doc, o.path)) !== JSON.stringify(o.value))
          throw invalidPatch(`testing value ${o.path} failed: test failed`);
        break;
      default:
        throw invalidPatch(`Unexpected kind: ${o.op}`);
    }
  }
  return doc;
}

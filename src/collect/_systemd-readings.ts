/**
 * A unit's D-Bus properties → readings (pure). Each value is typed by its variant's signature:
 *
 * - b → a boolean; y n q i u h → a number; s o g → a string.
 * - x t → a number when it is a safe integer (≤ 2^53 − 1), else its decimal string; t = 2^64 − 1,
 *   systemd's "infinity" (no limit, no timeout, a timestamp that never comes), is the string
 *   "infinity", as systemctl prints limits (counters systemd does not keep, MemoryCurrent or
 *   IPIngressBytes without accounting, carry the same value). Timestamps and durations (…Timestamp,
 *   …USec) stay numbers of µs.
 * - d → a number ("nan", "infinity", "-infinity" for the non-finite ones, which a reading cannot be).
 * - an array of basic values → one string, the values joined with a space as systemctl does
 *   (Wants, After, Environment…); a value that is empty or holds whitespace, `"` or a backslash is written
 *   as a JSON string (`"KUBELET_ARGS=--v=2 --node-ip=10.0.0.7" HOME=/root`), so the list reads back
 *   unambiguously; an array of bytes (ay) → lowercase hex; an empty array → "".
 * - structs, dicts and arrays of them (ExecStart, IOReadBandwidthMax…) → compact JSON, fields in wire
 *   order: a struct is a JSON array, a dict a JSON object, inner values by the rules above (inside
 *   JSON an array stays an array). The same properties give the same text on every node.
 *
 * Properties named in DROPPED and any containing "Credential" are left out; so is the whole unit
 * when its LoadState is "not-found" (no such unit on this host).
 */

import type { Reading, Readings } from "../snapshot/schema.ts";
import { type DbusType, type DbusValue, type DbusVariant, parseSingleType } from "./_dbus-signature.ts";

// Noise or sensitive: CPU/NUMA pinning masks, condition bookkeeping, attached BPF programs, bus names.
const DROPPED = new Set(["AllowedCPUs", "AllowedMemoryNodes", "Asserts", "BPFProgram", "BusName", "Id"]);
const UINT64_MAX = 2n ** 64n - 1n;
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export function keepProperty(name: string): boolean {
  return !DROPPED.has(name) && !name.includes("Credential") && name !== "__proto__";
}

type Json = string | number | boolean | Json[] | { [key: string]: Json };

function scalar(code: string, v: DbusValue): string | number | boolean {
  if (typeof v === "bigint") {
    if (code === "t" && v === UINT64_MAX) return "infinity";
    return v <= SAFE && v >= -SAFE ? Number(v) : v.toString();
  }
  if (typeof v === "number" && !Number.isFinite(v))
    return Number.isNaN(v) ? "nan" : v > 0 ? "infinity" : "-infinity";
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "string") return v;
  return JSON.stringify(v);
}

const listItem = (s: string): string => (s === "" || /[\s"\\]/.test(s) ? JSON.stringify(s) : s);

const hex = (bytes: DbusValue[]): string =>
  bytes.map((b) => (typeof b === "number" ? b.toString(16).padStart(2, "0") : "")).join("");

function toJson(type: DbusType, v: DbusValue): Json {
  switch (type.kind) {
    case "basic":
      return scalar(type.code, v);
    case "variant":
      return toJson(parseSingleType((v as DbusVariant).signature), (v as DbusVariant).value);
    case "struct":
      return type.fields.map((f, i) => toJson(f, (v as DbusValue[])[i] as DbusValue));
    case "entry":
      return [
        toJson(type.key, (v as DbusValue[])[0] as DbusValue),
        toJson(type.value, (v as DbusValue[])[1] as DbusValue),
      ];
    case "array": {
      const items = v as DbusValue[];
      const el = type.element;
      if (el.kind === "basic" && el.code === "y") return hex(items);
      if (el.kind === "entry") {
        const out: { [key: string]: Json } = Object.create(null);
        for (const item of items) {
          const [k, val] = item as [DbusValue, DbusValue];
          out[String(scalar("s", k))] = toJson(el.value, val);
        }
        return out;
      }
      return items.map((item) => toJson(el, item));
    }
  }
}

/** One property's value as a reading (see the file's header for the rules). */
export function propertyReading(variant: DbusVariant): Reading {
  const type = parseSingleType(variant.signature);
  const v = variant.value;
  if (type.kind === "variant") return propertyReading(v as DbusVariant);
  if (type.kind === "basic") return scalar(type.code, v);
  if (type.kind === "array") {
    const items = v as DbusValue[];
    if (items.length === 0) return "";
    const el = type.element;
    if (el.kind === "basic" && el.code === "y") return hex(items);
    if (el.kind === "basic") return items.map((item) => listItem(String(scalar(el.code, item)))).join(" ");
  }
  return JSON.stringify(toJson(type, v));
}

/** GetAll's a{sv} → readings; undefined for a unit systemd does not know (LoadState "not-found"). */
export function unitReadings(properties: readonly (readonly [string, DbusVariant])[]): Readings | undefined {
  const out: Readings = {};
  for (const [name, variant] of properties) {
    if (!keepProperty(name) || Object.hasOwn(out, name)) continue;
    out[name] = propertyReading(variant);
  }
  if (out.LoadState === "not-found") return undefined;
  return out;
}

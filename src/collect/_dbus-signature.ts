/**
 * D-Bus type signatures (pure): parsed into type trees, with the specification's limits (255 bytes,
 * 32 nested arrays, 32 nested structs, dict entries only as array elements with a basic key), and
 * each type's alignment. Values of these types are DbusValue: integers that fit a double as numbers,
 * 64-bit ones (x, t) as bigints, structs and arrays as arrays, a dict entry as a [key, value] pair,
 * a variant as { signature, value }.
 */

export type BasicCode = "y" | "b" | "n" | "q" | "i" | "u" | "x" | "t" | "d" | "h" | "s" | "o" | "g";

export type DbusType =
  | { kind: "basic"; code: BasicCode }
  | { kind: "variant" }
  | { kind: "array"; element: DbusType }
  | { kind: "struct"; fields: DbusType[] }
  | { kind: "entry"; key: DbusType; value: DbusType };

export interface DbusVariant {
  /** One complete type. */
  signature: string;
  value: DbusValue;
}

export type DbusValue = number | bigint | boolean | string | DbusValue[] | DbusVariant;

/** Malformed wire data or a value that does not fit its type. */
export class DbusProtocolError extends Error {
  override readonly name = "DbusProtocolError";
}

export const MAX_SIGNATURE_BYTES = 255;
const MAX_ARRAY_DEPTH = 32;
const MAX_STRUCT_DEPTH = 32;
const BASIC = new Set<string>(["y", "b", "n", "q", "i", "u", "x", "t", "d", "h", "s", "o", "g"]);
const ALIGN: Readonly<Record<BasicCode, number>> = {
  y: 1,
  b: 4,
  n: 2,
  q: 2,
  i: 4,
  u: 4,
  x: 8,
  t: 8,
  d: 8,
  h: 4,
  s: 4,
  o: 4,
  g: 1,
};

/** The boundary a value of `type` starts on. */
export function alignmentOf(type: DbusType): number {
  switch (type.kind) {
    case "basic":
      return ALIGN[type.code];
    case "variant":
      return 1;
    case "array":
      return 4;
    default:
      return 8;
  }
}

class Parser {
  at = 0;
  arrays = 0;
  structs = 0;
  constructor(private readonly sig: string) {}

  fail(why: string): never {
    throw new DbusProtocolError(`bad signature ${JSON.stringify(this.sig)}: ${why}`);
  }

  one(): DbusType {
    const c = this.sig[this.at++];
    if (c === undefined) return this.fail("a type is missing");
    if (BASIC.has(c)) return { kind: "basic", code: c as BasicCode };
    if (c === "v") return { kind: "variant" };
    if (c === "a") {
      if (++this.arrays > MAX_ARRAY_DEPTH) this.fail(`more than ${MAX_ARRAY_DEPTH} nested arrays`);
      const element = this.sig[this.at] === "{" ? this.entry() : this.one();
      this.arrays--;
      return { kind: "array", element };
    }
    if (c === "(") {
      if (++this.structs > MAX_STRUCT_DEPTH) this.fail(`more than ${MAX_STRUCT_DEPTH} nested structs`);
      const fields: DbusType[] = [];
      while (this.sig[this.at] !== ")") {
        if (this.at >= this.sig.length) this.fail("a struct is not closed");
        fields.push(this.one());
      }
      this.at++;
      this.structs--;
      if (fields.length === 0) this.fail("an empty struct");
      return { kind: "struct", fields };
    }
    if (c === "{") return this.fail("a dict entry outside an array");
    return this.fail(`unexpected ${JSON.stringify(c)} at ${this.at - 1}`);
  }

  entry(): DbusType {
    this.at++;
    if (++this.structs > MAX_STRUCT_DEPTH) this.fail(`more than ${MAX_STRUCT_DEPTH} nested structs`);
    const key = this.one();
    if (key.kind !== "basic") this.fail("a dict key must be a basic type");
    const value = this.one();
    if (this.sig[this.at++] !== "}") this.fail("a dict entry holds exactly a key and a value");
    this.structs--;
    return { kind: "entry", key, value };
  }
}

const cache = new Map<string, DbusType[]>();

/** Every complete type of `signature`, in order (an empty signature is no type). */
export function parseSignature(signature: string): DbusType[] {
  const hit = cache.get(signature);
  if (hit) return hit;
  if (signature.length > MAX_SIGNATURE_BYTES)
    throw new DbusProtocolError(`signature longer than ${MAX_SIGNATURE_BYTES} bytes`);
  const parser = new Parser(signature);
  const types: DbusType[] = [];
  while (parser.at < signature.length) types.push(parser.one());
  if (cache.size < 1024) cache.set(signature, types);
  return types;
}

/** The one complete type a variant's signature must hold. */
export function parseSingleType(signature: string): DbusType {
  const types = parseSignature(signature);
  if (types.length !== 1 || !types[0])
    throw new DbusProtocolError(`a variant holds one complete type, not ${JSON.stringify(signature)}`);
  return types[0];
}

/** The signature text of a type tree (the inverse of parseSignature for one type). */
export function signatureOf(type: DbusType): string {
  switch (type.kind) {
    case "basic":
      return type.code;
    case "variant":
      return "v";
    case "array":
      return `a${signatureOf(type.element)}`;
    case "struct":
      return `(${type.fields.map(signatureOf).join("")})`;
    case "entry":
      return `{${signatureOf(type.key)}${signatureOf(type.value)}}`;
  }
}

const OBJECT_PATH = /^\/$|^(\/[A-Za-z0-9_]+)+$/;

export function isObjectPath(s: string): boolean {
  return OBJECT_PATH.test(s);
}

/**
 * Values → D-Bus wire data (pure), little-endian unless asked otherwise. Alignment is counted from
 * the start of the buffer: write a message's header and body with one writer, or a body on its own
 * (it starts on an 8-byte boundary either way). A value that does not fit its type is refused.
 */
import {
  alignmentOf,
  DbusProtocolError,
  type DbusType,
  type DbusValue,
  type DbusVariant,
  isObjectPath,
  MAX_SIGNATURE_BYTES,
  parseSignature,
  parseSingleType,
} from "./_dbus-signature.ts";

const utf8 = new TextEncoder();
const INT_RANGE: Readonly<Record<string, [number, number]>> = {
  y: [0, 0xff],
  n: [-0x8000, 0x7fff],
  q: [0, 0xffff],
  i: [-0x80000000, 0x7fffffff],
  u: [0, 0xffffffff],
  h: [0, 0xffffffff],
};
const BIG_RANGE: Readonly<Record<string, [bigint, bigint]>> = {
  x: [-(2n ** 63n), 2n ** 63n - 1n],
  t: [0n, 2n ** 64n - 1n],
};

const misfit = (code: string, value: unknown): DbusProtocolError =>
  new DbusProtocolError(`${typeof value} ${String(value)} does not fit D-Bus type ${code}`);

const isVariant = (v: DbusValue): v is DbusVariant =>
  typeof v === "object" && !Array.isArray(v) && typeof v.signature === "string";

export class DbusWriter {
  private buf = new Uint8Array(256);
  private view = new DataView(this.buf.buffer);
  length = 0;

  constructor(readonly littleEndian = true) {}

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  align(boundary: number): void {
    const next = Math.ceil(this.length / boundary) * boundary;
    this.room(next - this.length);
    this.buf.fill(0, this.length, next);
    this.length = next;
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, this.length);
  }

  /** Every complete type of `signature` with its value, in order. */
  writeAll(signature: string, values: readonly DbusValue[]): void {
    const types = parseSignature(signature);
    if (types.length !== values.length)
      throw new DbusProtocolError(
        `signature ${JSON.stringify(signature)} takes ${types.length} values, not ${values.length}`,
      );
    for (const [i, t] of types.entries()) this.write(t, values[i] as DbusValue);
  }

  write(type: DbusType, value: DbusValue): void {
    this.align(alignmentOf(type));
    switch (type.kind) {
      case "basic":
        this.basic(type.code, value);
        return;
      case "variant": {
        if (!isVariant(value)) throw misfit("v", value);
        this.signature(value.signature);
        this.write(parseSingleType(value.signature), value.value);
        return;
      }
      case "struct":
      case "entry": {
        const fields = type.kind === "struct" ? type.fields : [type.key, type.value];
        if (!Array.isArray(value) || value.length !== fields.length) throw misfit(type.kind, value);
        for (const [i, f] of fields.entries()) this.write(f, value[i] as DbusValue);
        return;
      }
      case "array": {
        if (!Array.isArray(value)) throw misfit("a", value);
        const at = this.length;
        this.u32(0);
        this.align(alignmentOf(type.element));
        const start = this.length;
        for (const item of value) this.write(type.element, item);
        this.view.setUint32(at, this.length - start, this.littleEndian);
      }
    }
  }

  private u32(v: number): void {
    this.room(4);
    this.view.setUint32(this.length, v, this.littleEndian);
    this.length += 4;
  }

  private basic(code: string, value: DbusValue): void {
    const le = this.littleEndian;
    if (code === "b") {
      if (typeof value !== "boolean") throw misfit(code, value);
      this.u32(value ? 1 : 0);
      return;
    }
    if (code === "s" || code === "o") {
      if (typeof value !== "string" || value.includes("\0")) throw misfit(code, value);
      if (code === "o" && !isObjectPath(value))
        throw new DbusProtocolError(`bad object path ${JSON.stringify(value)}`);
      const bytes = utf8.encode(value);
      this.u32(bytes.length);
      this.raw(bytes);
      return;
    }
    if (code === "g") {
      if (typeof value !== "string") throw misfit(code, value);
      this.signature(value);
      return;
    }
    if (code === "d") {
      if (typeof value !== "number") throw misfit(code, value);
      this.room(8);
      this.view.setFloat64(this.length, value, le);
      this.length += 8;
      return;
    }
    const big = BIG_RANGE[code];
    if (big) {
      const v = typeof value === "number" && Number.isInteger(value) ? BigInt(value) : value;
      if (typeof v !== "bigint" || v < big[0] || v > big[1]) throw misfit(code, value);
      this.room(8);
      if (code === "x") this.view.setBigInt64(this.length, v, le);
      else this.view.setBigUint64(this.length, v, le);
      this.length += 8;
      return;
    }
    const [min, max] = INT_RANGE[code] ?? [0, -1];
    if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max)
      throw misfit(code, value);
    const size = code === "y" ? 1 : code === "n" || code === "q" ? 2 : 4;
    this.room(size);
    if (size === 1) this.buf[this.length] = value;
    else if (code === "n") this.view.setInt16(this.length, value, le);
    else if (code === "q") this.view.setUint16(this.length, value, le);
    else if (code === "i") this.view.setInt32(this.length, value, le);
    else this.view.setUint32(this.length, value, le);
    this.length += size;
  }

  private signature(sig: string): void {
    parseSignature(sig);
    const bytes = utf8.encode(sig);
    if (bytes.length > MAX_SIGNATURE_BYTES) throw new DbusProtocolError("signature longer than 255 bytes");
    this.room(1);
    this.buf[this.length++] = bytes.length;
    this.raw(bytes);
  }

  private raw(bytes: Uint8Array): void {
    this.room(bytes.length + 1);
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
    this.buf[this.length++] = 0;
  }
}

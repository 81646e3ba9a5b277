/**
 * D-Bus wire data → values (pure), either byte order. Alignment is counted from the start of the
 * buffer, which is the start of the message (a body starts on an 8-byte boundary, so reading a body
 * on its own aligns the same). Everything is checked as it is read: padding must be zero, a boolean
 * 0 or 1, strings UTF-8 without NUL and NUL-terminated, object paths and signatures well-formed, an
 * array no longer than 64 MiB nor than the bytes left, variants nested at most 64 deep. Nothing is
 * ever allocated from a length before that length is known to be inside the buffer.
 */
import {
  alignmentOf,
  DbusProtocolError,
  type DbusType,
  type DbusValue,
  isObjectPath,
  parseSignature,
  parseSingleType,
} from "./_dbus-signature.ts";

const MAX_ARRAY_BYTES = 64 * 1024 * 1024;
const MAX_DEPTH = 64;
const utf8 = new TextDecoder("utf-8", { fatal: true });

export class DbusReader {
  pos: number;
  private readonly view: DataView;

  constructor(
    readonly bytes: Uint8Array,
    readonly littleEndian: boolean,
    start = 0,
    readonly end = bytes.length,
  ) {
    this.pos = start;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private need(n: number, what: string): void {
    if (this.pos + n > this.end)
      throw new DbusProtocolError(
        `truncated: ${what} needs ${n} bytes at ${this.pos}, ${this.end - this.pos} left`,
      );
  }

  align(boundary: number): void {
    const next = Math.ceil(this.pos / boundary) * boundary;
    this.need(next - this.pos, "padding");
    for (; this.pos < next; this.pos++)
      if (this.bytes[this.pos] !== 0) throw new DbusProtocolError(`non-zero padding at ${this.pos}`);
  }

  /** The values of every complete type of `signature`, in order. */
  readAll(signature: string): DbusValue[] {
    return parseSignature(signature).map((t) => this.read(t));
  }

  read(type: DbusType, depth = 0): DbusValue {
    if (depth > MAX_DEPTH) throw new DbusProtocolError(`values nested more than ${MAX_DEPTH} deep`);
    this.align(alignmentOf(type));
    switch (type.kind) {
      case "basic":
        return this.basic(type.code);
      case "variant": {
        const signature = this.signature();
        const inner = parseSingleType(signature);
        return { signature, value: this.read(inner, depth + 1) };
      }
      case "struct":
        return type.fields.map((f) => this.read(f, depth + 1));
      case "entry":
        return [this.read(type.key, depth + 1), this.read(type.value, depth + 1)];
      case "array": {
        const length = this.u32();
        if (length > MAX_ARRAY_BYTES) throw new DbusProtocolError(`array of ${length} bytes (over 64 MiB)`);
        this.align(alignmentOf(type.element));
        this.need(length, "array");
        const stop = this.pos + length;
        const out: DbusValue[] = [];
        while (this.pos < stop) out.push(this.read(type.element, depth + 1));
        if (this.pos !== stop)
          throw new DbusProtocolError(`array element runs past the array's end at ${stop}`);
        return out;
      }
    }
  }

  private u32(): number {
    this.need(4, "uint32");
    const v = this.view.getUint32(this.pos, this.littleEndian);
    this.pos += 4;
    return v;
  }

  private basic(code: string): DbusValue {
    const le = this.littleEndian;
    const at = this.pos;
    switch (code) {
      case "y":
        this.need(1, "byte");
        this.pos += 1;
        return this.bytes[at] as number;
      case "b": {
        const v = this.u32();
        if (v > 1) throw new DbusProtocolError(`boolean ${v} at ${at} (only 0 or 1)`);
        return v === 1;
      }
      case "n":
      case "q":
        this.need(2, "int16");
        this.pos += 2;
        return code === "n" ? this.view.getInt16(at, le) : this.view.getUint16(at, le);
      case "i":
        this.need(4, "int32");
        this.pos += 4;
        return this.view.getInt32(at, le);
      case "u":
      case "h":
        return this.u32();
      case "x":
      case "t":
      case "d":
        this.need(8, "8-byte value");
        this.pos += 8;
        if (code === "d") return this.view.getFloat64(at, le);
        return code === "x" ? this.view.getBigInt64(at, le) : this.view.getBigUint64(at, le);
      case "s":
        return this.text(this.u32(), "string");
      case "o": {
        const path = this.text(this.u32(), "object path");
        if (!isObjectPath(path)) throw new DbusProtocolError(`bad object path ${JSON.stringify(path)}`);
        return path;
      }
      default:
        return this.signature();
    }
  }

  private signature(): string {
    this.need(1, "signature length");
    const length = this.bytes[this.pos++] as number;
    const sig = this.text(length, "signature");
    parseSignature(sig);
    return sig;
  }

  private text(length: number, what: string): string {
    this.need(length + 1, what);
    const raw = this.bytes.subarray(this.pos, this.pos + length);
    if (this.bytes[this.pos + length] !== 0)
      throw new DbusProtocolError(`${what} at ${this.pos} is not NUL-terminated`);
    if (raw.includes(0)) throw new DbusProtocolError(`${what} at ${this.pos} holds a NUL`);
    let s: string;
    try {
      s = utf8.decode(raw);
    } catch {
      throw new DbusProtocolError(`${what} at ${this.pos} is not UTF-8`);
    }
    this.pos += length + 1;
    return s;
  }
}

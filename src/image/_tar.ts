/**
 * A deterministic tar writer and a reader for the archives aicr writes and reads (image layers and
 * OCI archives). Pure: bytes in, bytes out. The writer emits POSIX ustar with every field that
 * varies between machines fixed (owner 0:0, no user or group names, one mtime), so the same entries
 * always give the same bytes. The reader also understands PAX path records and GNU long names, which
 * other tools (skopeo, Go's archive/tar) write.
 */

export type TarEntry =
  | { type: "file"; path: string; mode: number; data: Uint8Array }
  | { type: "dir"; path: string; mode: number }
  | { type: "symlink"; path: string; target: string };

export interface TarWriteOptions {
  /** Seconds since the epoch written as every entry's mtime (default 0). */
  mtime?: number;
}

const BLOCK = 512;
const enc = new TextEncoder();
const dec = new TextDecoder();

function octal(value: number, width: number): string {
  // width includes the terminating NUL
  return value.toString(8).padStart(width - 1, "0");
}

function putString(buf: Uint8Array, offset: number, width: number, text: string): void {
  const bytes = enc.encode(text);
  if (bytes.length > width) throw new RangeError(`tar field too long (${bytes.length} > ${width}): ${text}`);
  buf.set(bytes, offset);
}

/** Splits a path into ustar's name (100) and prefix (155) fields, or throws. */
function splitPath(path: string): { name: string; prefix: string } {
  if (enc.encode(path).length <= 100) return { name: path, prefix: "" };
  for (let i = path.lastIndexOf("/"); i > 0; i = path.lastIndexOf("/", i - 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (enc.encode(prefix).length <= 155 && enc.encode(name).length <= 100 && name) return { name, prefix };
  }
  throw new RangeError(`tar path too long for ustar: ${path}`);
}

function header(entry: TarEntry, size: number, mtime: number): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const { name, prefix } = splitPath(entry.path);
  putString(h, 0, 100, name);
  const mode = entry.type === "symlink" ? 0o777 : entry.mode;
  putString(h, 100, 8, octal(mode, 8));
  putString(h, 108, 8, octal(0, 8));
  putString(h, 116, 8, octal(0, 8));
  putString(h, 124, 12, octal(size, 12));
  putString(h, 136, 12, octal(mtime, 12));
  h.fill(0x20, 148, 156); // checksum is computed with its own field as spaces
  h[156] = enc.encode(entry.type === "file" ? "0" : entry.type === "dir" ? "5" : "2")[0]!;
  if (entry.type === "symlink") putString(h, 157, 100, entry.target);
  putString(h, 257, 6, "ustar");
  putString(h, 263, 2, "00");
  putString(h, 345, 155, prefix);
  let sum = 0;
  for (const b of h) sum += b;
  putString(h, 148, 8, `${octal(sum, 7)}\0`);
  return h;
}

/** Serialises entries in the order given (callers sort them); ends with two zero blocks. */
export function writeTar(entries: readonly TarEntry[], options: TarWriteOptions = {}): Uint8Array {
  const mtime = options.mtime ?? 0;
  let total = 2 * BLOCK;
  for (const e of entries)
    total += BLOCK + (e.type === "file" ? Math.ceil(e.data.length / BLOCK) * BLOCK : 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const e of entries) {
    const size = e.type === "file" ? e.data.length : 0;
    out.set(header(e, size, mtime), at);
    at += BLOCK;
    if (e.type === "file") {
      out.set(e.data, at);
      at += Math.ceil(size / BLOCK) * BLOCK;
    }
  }
  return out;
}

export interface TarMember {
  path: string;
  type: "file" | "dir" | "symlink" | "hardlink" | "other";
  mode: number;
  /** Link target for symlinks and hard links. */
  target: string;
  /** The member's bytes (a view into the archive, not a copy). */
  data: Uint8Array;
}

function field(buf: Uint8Array, offset: number, width: number): string {
  const slice = buf.subarray(offset, offset + width);
  const nul = slice.indexOf(0);
  return dec.decode(nul < 0 ? slice : slice.subarray(0, nul));
}

function number(buf: Uint8Array, offset: number, width: number): number {
  if ((buf[offset]! & 0x80) !== 0) {
    // GNU base-256 for sizes beyond 8 GiB
    let n = 0;
    for (let i = offset + 1; i < offset + width; i++) n = n * 256 + buf[i]!;
    return n;
  }
  const text = field(buf, offset, width).trim();
  return text ? Number.parseInt(text, 8) : 0;
}

function paxRecords(data: Uint8Array): Record<string, string> {
  const out: Record<string, string> = {};
  const text = dec.decode(data);
  let i = 0;
  while (i < text.length) {
    const space = text.indexOf(" ", i);
    if (space < 0) break;
    const len = Number.parseInt(text.slice(i, space), 10);
    if (!Number.isFinite(len) || len <= 0) break;
    const record = text.slice(space + 1, i + len - 1);
    const eq = record.indexOf("=");
    if (eq > 0) out[record.slice(0, eq)] = record.slice(eq + 1);
    i += len;
  }
  return out;
}

const TYPES: Record<string, TarMember["type"]> = {
  "0": "file",
  "\0": "file",
  "7": "file",
  "5": "dir",
  "2": "symlink",
  "1": "hardlink",
};

/** Every member of a tar archive, in order. Throws on a truncated or corrupt archive. */
export function readTar(tar: Uint8Array): TarMember[] {
  const members: TarMember[] = [];
  let at = 0;
  let longName: string | undefined;
  let longLink: string | undefined;
  let pax: Record<string, string> = {};
  while (at + BLOCK <= tar.length) {
    const h = tar.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) break;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
    if (sum !== number(h, 148, 8)) throw new Error(`corrupt tar header at byte ${at}: checksum mismatch`);
    const size = number(h, 124, 12);
    const typeflag = String.fromCharCode(h[156]!);
    const start = at + BLOCK;
    if (start + size > tar.length) throw new Error(`truncated tar: member at byte ${at} needs ${size} bytes`);
    const data = tar.subarray(start, start + size);
    at = start + Math.ceil(size / BLOCK) * BLOCK;
    if (typeflag === "x") {
      pax = { ...pax, ...paxRecords(data) };
      continue;
    }
    if (typeflag === "g") continue;
    if (typeflag === "L" || typeflag === "K") {
      const text = dec.decode(data).replace(/\0+$/, "");
      if (typeflag === "L") longName = text;
      else longLink = text;
      continue;
    }
    const prefix = field(h, 345, 155);
    const name = field(h, 0, 100);
    const path = pax.path ?? longName ?? (prefix ? `${prefix}/${name}` : name);
    members.push({
      path,
      type: TYPES[typeflag] ?? "other",
      mode: number(h, 100, 8),
      target: pax.linkpath ?? longLink ?? field(h, 157, 100),
      data,
    });
    pax = {};
    longName = undefined;
    longLink = undefined;
  }
  return members;
}

/**
 * Reads what the dynamic loader needs from an ELF64 little-endian executable or shared library:
 * the machine, the program interpreter (PT_INTERP) and the dynamic section's DT_NEEDED and
 * DT_SONAME. Pure: bytes in, facts out. Used to build the image's runtime layer from exactly what
 * the binary links against, and to check that a binary matches that layer.
 */

export type ElfMachine = "x86_64" | "aarch64";

export interface ElfInfo {
  machine: ElfMachine;
  /** PT_INTERP, e.g. /lib64/ld-linux-x86-64.so.2; undefined for a shared library or a static binary. */
  interpreter: string | undefined;
  /** DT_NEEDED in file order. */
  needed: string[];
  soname: string | undefined;
}

export class ElfError extends Error {
  override readonly name = "ElfError";
}

const MACHINES: Record<number, ElfMachine> = { 62: "x86_64", 183: "aarch64" };
const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const PT_INTERP = 3;
const DT_NULL = 0n;
const DT_NEEDED = 1n;
const DT_STRTAB = 5n;
const DT_SONAME = 14n;

interface Segment {
  type: number;
  offset: number;
  vaddr: number;
  filesz: number;
}

const cString = (bytes: Uint8Array, at: number, what: string): string => {
  const end = bytes.indexOf(0, at);
  if (at >= bytes.length || end < 0) throw new ElfError(`${what} points outside the file`);
  return new TextDecoder().decode(bytes.subarray(at, end));
};

export function readElf(bytes: Uint8Array): ElfInfo {
  if (bytes.length < 64 || bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46)
    throw new ElfError("not an ELF file (no \\x7fELF magic)");
  if (bytes[4] !== 2 || bytes[5] !== 1)
    throw new ElfError(`unsupported ELF: class ${bytes[4]}, data ${bytes[5]} (only ELF64 little-endian)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u64 = (at: number): number => Number(view.getBigUint64(at, true));
  const code = view.getUint16(18, true);
  const machine = MACHINES[code];
  if (!machine) throw new ElfError(`unsupported ELF machine ${code} (only x86_64 and aarch64)`);

  const phoff = u64(32);
  const phentsize = view.getUint16(54, true);
  const phnum = view.getUint16(56, true);
  if (phentsize < 56 || phoff + phnum * phentsize > bytes.length)
    throw new ElfError("program headers point outside the file");
  const segments: Segment[] = [];
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    segments.push({
      type: view.getUint32(at, true),
      offset: u64(at + 8),
      vaddr: u64(at + 16),
      filesz: u64(at + 32),
    });
  }

  const interp = segments.find((s) => s.type === PT_INTERP);
  const interpreter = interp ? cString(bytes, interp.offset, "PT_INTERP") : undefined;

  const dynamic = segments.find((s) => s.type === PT_DYNAMIC);
  if (!dynamic) return { machine, interpreter, needed: [], soname: undefined };
  if (dynamic.offset + dynamic.filesz > bytes.length)
    throw new ElfError("PT_DYNAMIC points outside the file");
  const entries: [bigint, number][] = [];
  for (let at = dynamic.offset; at + 16 <= dynamic.offset + dynamic.filesz; at += 16) {
    const tag = view.getBigInt64(at, true);
    if (tag === DT_NULL) break;
    entries.push([tag, u64(at + 8)]);
  }
  const strtabAddr = entries.find(([t]) => t === DT_STRTAB)?.[1];
  if (strtabAddr === undefined) throw new ElfError("dynamic section has no DT_STRTAB");
  // DT_STRTAB is a virtual address: map it to a file offset through the loadable segment holding it.
  const load = segments.find(
    (s) => s.type === PT_LOAD && strtabAddr >= s.vaddr && strtabAddr < s.vaddr + s.filesz,
  );
  if (!load) throw new ElfError("DT_STRTAB is in no loadable segment");
  const strtab = strtabAddr - load.vaddr + load.offset;
  const str = (tag: bigint) =>
    entries.filter(([t]) => t === tag).map(([, v]) => cString(bytes, strtab + v, "a dynamic string"));
  return { machine, interpreter, needed: str(DT_NEEDED), soname: str(DT_SONAME)[0] };
}

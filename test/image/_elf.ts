/** A minimal ELF64 little-endian file for tests: PT_INTERP, one PT_LOAD, PT_DYNAMIC with NEEDED/SONAME. */
export function fakeElf(options: {
  machine: "x86_64" | "aarch64" | number;
  interpreter?: string;
  needed?: string[];
  soname?: string;
}): Uint8Array {
  const enc = new TextEncoder();
  const machine = options.machine === "x86_64" ? 62 : options.machine === "aarch64" ? 183 : options.machine;
  const names = [...(options.needed ?? []), ...(options.soname ? [options.soname] : [])];
  // string table: a leading NUL, then each name NUL-terminated
  const strOffsets: number[] = [];
  let strtab = "\0";
  for (const n of names) {
    strOffsets.push(strtab.length);
    strtab += `${n}\0`;
  }
  const interp = options.interpreter === undefined ? undefined : enc.encode(`${options.interpreter}\0`);
  const phnum = 2 + (interp ? 1 : 0);
  const phEnd = 64 + phnum * 56;
  const interpAt = phEnd;
  const strAt = interpAt + (interp?.length ?? 0);
  const strBytes = enc.encode(strtab);
  const dynAt = Math.ceil((strAt + strBytes.length) / 8) * 8;
  const dyn: [bigint, bigint][] = [
    ...(options.needed ?? []).map((_, i) => [1n, BigInt(strOffsets[i]!)] as [bigint, bigint]),
    ...(options.soname ? [[14n, BigInt(strOffsets[names.length - 1]!)] as [bigint, bigint]] : []),
    [5n, BigInt(0x400000 + strAt)],
    [10n, BigInt(strBytes.length)],
    [0n, 0n],
  ];
  const total = dynAt + dyn.length * 16;
  const out = new Uint8Array(total);
  const v = new DataView(out.buffer);
  out.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1], 0);
  v.setUint16(16, 3, true);
  v.setUint16(18, machine, true);
  v.setUint32(20, 1, true);
  v.setBigUint64(32, 64n, true);
  v.setUint16(52, 64, true);
  v.setUint16(54, 56, true);
  v.setUint16(56, phnum, true);
  const ph = (i: number, type: number, offset: number, vaddr: number, size: number) => {
    const at = 64 + i * 56;
    v.setUint32(at, type, true);
    v.setBigUint64(at + 8, BigInt(offset), true);
    v.setBigUint64(at + 16, BigInt(vaddr), true);
    v.setBigUint64(at + 32, BigInt(size), true);
    v.setBigUint64(at + 40, BigInt(size), true);
  };
  let i = 0;
  if (interp) ph(i++, 3, interpAt, 0x400000 + interpAt, interp.length);
  ph(i++, 1, 0, 0x400000, total);
  ph(i++, 2, dynAt, 0x400000 + dynAt, dyn.length * 16);
  if (interp) out.set(interp, interpAt);
  out.set(strBytes, strAt);
  dyn.forEach(([tag, val], k) => {
    v.setBigInt64(dynAt + k * 16, tag, true);
    v.setBigUint64(dynAt + k * 16 + 8, val, true);
  });
  return out;
}

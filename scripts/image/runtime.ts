/**
 * The image's runtime layer: the dynamic loader and the C libraries Bun's linux glibc runtime links
 * against, taken from Debian's libc6 package, plus /tmp (1777). No shell, no package manager.
 * The root set is declared here, not read from the binary, because the binary carries this layer;
 * `npm run image` checks the built binary against it (checkBinaryNeeds).
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join, posix } from "node:path";
import type { Arch } from "../../src/image/_aicr-image.ts";
import { type ElfMachine, readElf } from "../../src/image/_elf.ts";
import { buildLayer, gunzip, type Layer, layerFromBlob } from "../../src/image/_layer.ts";
import { readTar, type TarEntry, type TarMember } from "../../src/image/_tar.ts";
import { type DebPackage, debFiles, debianPackage } from "./debian.ts";

export const ARCHES: Record<
  Arch,
  { machine: ElfMachine; triplet: string; interpreter: string; target: string }
> = {
  amd64: {
    machine: "x86_64",
    triplet: "x86_64-linux-gnu",
    interpreter: "/lib64/ld-linux-x86-64.so.2",
    target: "linux-x64",
  },
  arm64: {
    machine: "aarch64",
    triplet: "aarch64-linux-gnu",
    interpreter: "/lib/ld-linux-aarch64.so.1",
    target: "linux-arm64",
  },
};

/** What Bun's linux glibc runtime links against (besides the loader): the layer's root set. */
export const DECLARED_LIBS = ["libc.so.6", "libpthread.so.0", "libdl.so.2", "libm.so.6"];
const IMAGE_CACHE = join(homedir(), ".cache/aicr/image");

export interface RuntimeLayer {
  arch: Arch;
  layer: Layer;
  deb: DebPackage;
  /** Every path in the layer (files, symlinks, directories), in layer order. */
  paths: string[];
}

/** The files and symlinks the loader opens, starting from the declared set, resolved inside the package. */
export function runtimeEntries(members: TarMember[], arch: Arch): TarEntry[] {
  const { machine, triplet, interpreter } = ARCHES[arch];
  const byPath = new Map(members.map((m) => [m.path, m]));
  const out = new Map<string, TarEntry>();
  const pending = [interpreter, ...DECLARED_LIBS.map((l) => `/lib/${triplet}/${l}`)];
  while (pending.length > 0) {
    let path = posix.normalize(pending.shift()!).replace(/^\//, "");
    for (let hops = 0; ; hops++) {
      const m = byPath.get(path);
      if (!m) throw new Error(`libc6 (${arch}) has no ${path}`);
      if (out.has(path)) break;
      if (m.type === "symlink" && hops < 8) {
        out.set(path, { type: "symlink", path, target: m.target });
        path = posix.join(m.target.startsWith("/") ? "" : posix.dirname(path), m.target).replace(/^\//, "");
        continue;
      }
      if (m.type !== "file") throw new Error(`libc6 (${arch}): ${path} is a ${m.type}, not a library`);
      const elf = readElf(m.data);
      if (elf.machine !== machine) throw new Error(`libc6 (${arch}): ${path} is for ${elf.machine}`);
      out.set(path, { type: "file", path, mode: m.mode & 0o755, data: m.data });
      if (elf.interpreter) pending.push(elf.interpreter);
      pending.push(...elf.needed.map((n) => `/lib/${triplet}/${n}`));
      break;
    }
  }
  return [...out.values(), { type: "dir", path: "tmp", mode: 0o1777 }];
}

// The cache key covers everything that shapes the layer's bytes: the package, this code, Bun's zlib.
async function cacheKey(deb: DebPackage): Promise<string> {
  const hash = createHash("sha256").update(`${deb.sha256}\n${Bun.version}\n`);
  for (const file of [
    "runtime.ts",
    "../../src/image/_layer.ts",
    "../../src/image/_tar.ts",
    "../../src/image/_elf.ts",
  ])
    hash.update(await readFile(join(import.meta.dir, file)));
  return hash.digest("hex").slice(0, 16);
}

/** The runtime layer for one architecture, from the cache when this package and code built it before. */
export async function runtimeLayer(arch: Arch): Promise<RuntimeLayer> {
  const deb = await debianPackage("libc6", arch);
  const dir = join(IMAGE_CACHE, `runtime-${arch}-${await cacheKey(deb)}`);
  const blobFile = join(dir, "layer.tar.gz");
  let layer: Layer;
  if (existsSync(blobFile)) layer = layerFromBlob(new Uint8Array(await readFile(blobFile)));
  else {
    layer = buildLayer(runtimeEntries(await debFiles(deb.path), arch));
    await mkdir(dir, { recursive: true });
    await writeFile(`${blobFile}.${process.pid}.tmp`, layer.blob);
    await rename(`${blobFile}.${process.pid}.tmp`, blobFile);
  }
  return { arch, layer, deb, paths: layerPaths(layer) };
}

/** Every path the layer holds, read back from its blob (symlinks with their targets). */
export const layerPaths = (layer: Layer): string[] =>
  readTar(gunzip(layer.blob)).map((m) => (m.type === "symlink" ? `${m.path} -> ${m.target}` : m.path));

/** The binary must need exactly what the layer was built for: fails loudly when Bun's runtime changes. */
export function checkBinaryNeeds(binary: Uint8Array, arch: Arch, name: string): void {
  const elf = readElf(binary);
  const { machine, interpreter } = ARCHES[arch];
  const want = [...DECLARED_LIBS, posix.basename(interpreter)].sort();
  const got = [...elf.needed].sort();
  if (elf.machine !== machine || elf.interpreter !== interpreter || got.join() !== want.join())
    throw new Error(
      `${name} does not match the runtime layer declared for ${arch}: ` +
        `machine ${elf.machine} (want ${machine}), PT_INTERP ${elf.interpreter} (want ${interpreter}), ` +
        `DT_NEEDED ${got.join(", ")} (want ${want.join(", ")}); update DECLARED_LIBS in scripts/image/runtime.ts`,
    );
}

const USAGE = `usage: bun scripts/image/runtime.ts closure <amd64|arm64> <package.tar>
       bun scripts/image/runtime.ts check <amd64|arm64> <binary> [name]`;

/**
 * As a program (the tests run it so): `closure` prints, as JSON, the entries runtimeEntries takes from
 * a package's files (a plain tar of them, as dpkg-deb --fsys-tarfile gives; file data left out);
 * `check` is checkBinaryNeeds on one binary. A refusal is one line on stderr and exit 1.
 */
async function main(args: string[]): Promise<number> {
  const [command, arch, file, name] = args;
  if (!(arch === "amd64" || arch === "arm64") || !file || (command !== "closure" && command !== "check")) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const bytes = new Uint8Array(await readFile(file));
  try {
    if (command === "check") checkBinaryNeeds(bytes, arch, name ?? file);
    else {
      const members = readTar(bytes).map((m) => ({
        ...m,
        path: m.path.replace(/^\.\//, "").replace(/\/$/, ""),
      }));
      const entries = runtimeEntries(members, arch).map((e) =>
        e.type === "file" ? { ...e, data: undefined } : e,
      );
      process.stdout.write(`${JSON.stringify(entries)}\n`);
    }
    return 0;
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));

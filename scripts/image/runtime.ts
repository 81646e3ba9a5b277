/**
 * The image's runtime layer: the dynamic loader and the C libraries Bun's linux glibc runtime links
 * against, taken from Debian's libc6 package, plus /tmp (1777), plus the package's dpkg record in
 * var/lib/dpkg/status.d/ (as distroless images keep it) so scanners see libc6. No shell, no package manager.
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
import { type DebPackage, debControl, debFiles, debianPackage } from "./debian.ts";

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

/**
 * dpkg's field order in its status database (fieldinfos in dpkg's lib/dpkg/parse.c); fields dpkg
 * does not know (Homepage, …) follow in the control file's order.
 */
const STATUS_ORDER = [
  "Package",
  "Essential",
  "Protected",
  "Status",
  "Priority",
  "Section",
  "Installed-Size",
  "Origin",
  "Maintainer",
  "Bugs",
  "Architecture",
  "Multi-Arch",
  "Source",
  "Version",
  "Config-Version",
  "Replaces",
  "Provides",
  "Depends",
  "Pre-Depends",
  "Recommends",
  "Suggests",
  "Breaks",
  "Conflicts",
  "Enhances",
  "Conffiles",
  "Description",
  "Triggers-Pending",
  "Triggers-Awaited",
];

/**
 * The package's stanza as dpkg writes it in its status database once installed: the control file's
 * fields with `Status: install ok installed`, in dpkg's order. No Conffiles: the layer ships none of
 * the package's conffiles.
 */
export function dpkgStatus(control: string): string {
  const fields = new Map<string, string>();
  let last: string | undefined;
  for (const line of control.replace(/\n+$/, "").split("\n")) {
    if (/^[ \t]/.test(line) && last) fields.set(last, `${fields.get(last)}\n${line}`);
    else {
      const m = /^([A-Za-z0-9][A-Za-z0-9-]*):[ \t]*(.*)$/.exec(line);
      if (!m || fields.has(m[1]!)) throw new Error(`not a control file line: ${JSON.stringify(line)}`);
      last = m[1]!;
      fields.set(last, m[2]!);
    }
  }
  for (const f of ["Package", "Version", "Architecture"])
    if (!fields.get(f)) throw new Error(`the control file has no ${f}`);
  if (fields.has("Status")) throw new Error("the control file has a Status field");
  fields.set("Status", "install ok installed");
  const known = STATUS_ORDER.filter((f) => fields.has(f));
  const rest = [...fields.keys()].filter((f) => !STATUS_ORDER.includes(f));
  return [...known, ...rest].map((f) => `${f}: ${fields.get(f)}\n`).join("");
}

/**
 * The package's md5sums lines (in its order) for the files the layer ships, and only those; each
 * file's MD5 must be the one the package lists (a file it does not list is refused).
 */
export function dpkgMd5sums(md5sums: string, shipped: readonly TarEntry[]): string {
  const files = new Map<string, Uint8Array>();
  for (const e of shipped) if (e.type === "file") files.set(e.path, e.data);
  const lines: string[] = [];
  for (const line of md5sums.split("\n").filter(Boolean)) {
    const m = /^([0-9a-f]{32}) {2}(.+)$/.exec(line);
    if (!m) throw new Error(`not an md5sums line: ${JSON.stringify(line)}`);
    const [, want, path] = m as unknown as [string, string, string];
    const data = files.get(path);
    if (!data) continue;
    const got = createHash("md5").update(data).digest("hex");
    if (got !== want) throw new Error(`${path}: the package's md5sums say ${want}, the file is ${got}`);
    lines.push(`${line}\n`);
    files.delete(path);
  }
  if (files.size > 0) throw new Error(`the package's md5sums do not list ${[...files.keys()].join(", ")}`);
  return lines.join("");
}

/** var/lib/dpkg/status.d/<package> and <package>.md5sums (0644; their directories 0755). */
export function dpkgEntries(control: string, md5sums: string, shipped: readonly TarEntry[]): TarEntry[] {
  const dir = "var/lib/dpkg/status.d";
  const text = (t: string) => new TextEncoder().encode(t);
  const status = dpkgStatus(control);
  const name = /^Package: (.+)$/m.exec(status)![1]!;
  if (!/^[a-z0-9][a-z0-9+.-]+$/.test(name))
    throw new Error(`not a Debian package name: ${JSON.stringify(name)}`);
  return [
    { type: "file", path: `${dir}/${name}`, mode: 0o644, data: text(status) },
    { type: "file", path: `${dir}/${name}.md5sums`, mode: 0o644, data: text(dpkgMd5sums(md5sums, shipped)) },
  ];
}

/** The .deb's control and md5sums files. */
async function controlFiles(deb: DebPackage): Promise<{ control: string; md5sums: string }> {
  const members = await debControl(deb.path);
  const read = (name: string): string => {
    const m = members.find((x) => x.path === name);
    if (m?.type !== "file") throw new Error(`${deb.path} has no ${name} in its control.tar`);
    return new TextDecoder().decode(m.data);
  };
  return { control: read("control"), md5sums: read("md5sums") };
}

// The cache key covers everything that shapes the layer's bytes: the package, this code, Bun's zlib.
async function cacheKey(deb: DebPackage): Promise<string> {
  const hash = createHash("sha256").update(`${deb.sha256}\n${Bun.version}\n`);
  for (const file of [
    "runtime.ts",
    "debian.ts",
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
    const entries = runtimeEntries(await debFiles(deb.path), arch);
    const { control, md5sums } = await controlFiles(deb);
    layer = buildLayer([...entries, ...dpkgEntries(control, md5sums, entries)]);
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
       bun scripts/image/runtime.ts dpkg <amd64|arm64> <package.tar> <control> <md5sums>
       bun scripts/image/runtime.ts check <amd64|arm64> <binary> [name]`;

/**
 * As a program (the tests run it so): `closure` prints, as JSON, the entries runtimeEntries takes from
 * a package's files (a plain tar of them, as dpkg-deb --fsys-tarfile gives; file data left out);
 * `dpkg` prints, as JSON, the status.d files (path, mode, text) for that closure given the package's
 * control and md5sums files; `check` is checkBinaryNeeds on one binary. A refusal is one line on
 * stderr and exit 1.
 */
async function main(args: string[]): Promise<number> {
  const [command, arch, file, name, md5sums] = args;
  const known = command === "closure" || command === "check" || (command === "dpkg" && name && md5sums);
  if (!(arch === "amd64" || arch === "arm64") || !file || !known) {
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
      const entries = runtimeEntries(members, arch);
      const out =
        command === "closure"
          ? entries.map((e) => (e.type === "file" ? { ...e, data: undefined } : e))
          : dpkgEntries(await readFile(name!, "utf8"), await readFile(md5sums!, "utf8"), entries).map((e) =>
              e.type === "file" ? { ...e, data: new TextDecoder().decode(e.data) } : e,
            );
      process.stdout.write(`${JSON.stringify(out)}\n`);
    }
    return 0;
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));

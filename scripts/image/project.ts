/**
 * What the build and `npm run image` both need to know about this checkout (version, revision,
 * image name, labels) and the files a linux binary carries: its runtime layer and image info (with
 * the build facts its image's SBOM and provenance are made of). One source for both, so the image
 * (and SBOM, provenance) the binary can save is what `npm run image` writes.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { releaseTag } from "../../src/core/version.ts";
import {
  type Arch,
  encodeInfo,
  type ImageInfo,
  infoAssetName,
  runtimeAssetName,
} from "../../src/image/_aicr-image.ts";
import type { BuildFacts } from "../../src/image/attest/_facts.ts";
import { buildFacts } from "./facts.ts";
import { ARCHES, type RuntimeLayer, runtimeLayer } from "./runtime.ts";

export const ROOT = join(import.meta.dir, "../..");
export const DIST = join(ROOT, "dist");
const DEFAULT_REPOSITORY = "ghcr.io/aicr-project/aicr";
const DEFAULT_SOURCE = "https://github.com/aicr-project/aicr";

export interface Project {
  version: string;
  revision: string;
  /**
   * When the sources were last changed, as the build date: $SOURCE_DATE_EPOCH, else the commit's
   * date (ISO 8601, UTC). Never the wall clock, so two builds of one checkout stay byte-identical.
   */
  built: string;
  /** AICR_IMAGE_REPOSITORY, else package.json config.imageRepository. */
  repository: string;
  tag: string;
  /** title, description, source, licenses. */
  labels: Record<string, string>;
}

export async function project(): Promise<Project> {
  const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
    version: string;
    description?: string;
    license?: string;
    repository?: { url?: string };
    config?: { imageRepository?: string };
  };
  const git = Bun.spawnSync(["git", "rev-parse", "HEAD"], { cwd: ROOT, stderr: "ignore" });
  const revision = (git.exitCode === 0 && git.stdout.toString().trim()) || "unknown";
  return {
    version: pkg.version,
    revision,
    built: buildDate(),
    repository: process.env.AICR_IMAGE_REPOSITORY || pkg.config?.imageRepository || DEFAULT_REPOSITORY,
    tag: releaseTag(pkg.version), // the tag the binary's default image names
    labels: {
      "org.opencontainers.image.title": "aicr",
      "org.opencontainers.image.description": pkg.description ?? "",
      "org.opencontainers.image.source": pkg.repository?.url ?? DEFAULT_SOURCE,
      "org.opencontainers.image.licenses": pkg.license ?? "NOASSERTION",
    },
  };
}

function buildDate(): string {
  const epoch = Number(process.env.SOURCE_DATE_EPOCH);
  if (Number.isInteger(epoch) && epoch > 0) return new Date(epoch * 1000).toISOString().replace(".000Z", "Z");
  const git = Bun.spawnSync(["git", "log", "-1", "--format=%ct"], { cwd: ROOT, stderr: "ignore" });
  const seconds = Number(git.stdout.toString().trim());
  return git.exitCode === 0 && seconds > 0
    ? new Date(seconds * 1000).toISOString().replace(".000Z", "Z")
    : "unknown";
}

/** The purl distro of Debian's suites (bookworm and its security updates are Debian 12). */
const DISTRO: Record<string, string> = { bookworm: "debian-12", "bookworm-security": "debian-12" };

export function imageInfo(p: Project, runtime: RuntimeLayer, build: BuildFacts): ImageInfo {
  const { deb } = runtime;
  const distro = DISTRO[deb.suite];
  if (!distro) throw new Error(`no purl distro is known for Debian suite ${deb.suite}`);
  return {
    arch: runtime.arch,
    version: p.version,
    revision: p.revision,
    repository: p.repository,
    tag: p.tag,
    labels: {
      ...p.labels,
      "run.aicr.runtime.libc6": deb.version,
      "run.aicr.runtime.libc6.deb": basename(deb.filename),
      "run.aicr.runtime.libc6.sha256": deb.sha256,
    },
    runtimeHistory: `libc6 ${deb.version} from Debian ${deb.suite} (${deb.architecture}): ${runtime.paths.join(" ")}`,
    runtimeDigest: runtime.layer.digest,
    runtimeDeb: {
      name: deb.name,
      version: deb.version,
      architecture: deb.architecture,
      sha256: deb.sha256,
      url: deb.url,
      distro,
    },
    build,
  };
}

export interface Carried {
  arch: Arch;
  runtime: RuntimeLayer;
  info: ImageInfo;
  infoBytes: Uint8Array;
  /** The two files to embed (dist/.carried/<arch>/), named as Bun.embeddedFiles will name them. */
  files: string[];
}

async function writeIfChanged(path: string, data: Uint8Array): Promise<void> {
  if (existsSync(path) && Buffer.from(await readFile(path)).equals(data)) return;
  await writeFile(`${path}.${process.pid}.tmp`, data);
  await rename(`${path}.${process.pid}.tmp`, path);
}

/**
 * The runtime layer and image info for one architecture, written where the build embeds them from;
 * `build` is the facts of that architecture's binary (computed when not given).
 */
export async function carried(p: Project, arch: Arch, build?: BuildFacts): Promise<Carried> {
  const [runtime, facts] = await Promise.all([
    runtimeLayer(arch),
    build ?? buildFacts(p, ARCHES[arch].target),
  ]);
  const info = imageInfo(p, runtime, facts);
  const infoBytes = encodeInfo(info);
  const dir = join(DIST, ".carried", arch);
  await mkdir(dir, { recursive: true });
  const files = [join(dir, runtimeAssetName(arch)), join(dir, infoAssetName(arch))];
  await writeIfChanged(files[0]!, runtime.layer.blob);
  await writeIfChanged(files[1]!, infoBytes);
  return { arch, runtime, info, infoBytes, files };
}

/** Whether a binary embeds exactly these carried files (a stale build embeds other bytes). */
export function carries(binary: Uint8Array, c: Carried): boolean {
  const hay = Buffer.from(binary.buffer, binary.byteOffset, binary.byteLength);
  return hay.indexOf(c.infoBytes) >= 0 && hay.indexOf(c.runtime.layer.blob) >= 0;
}

/**
 * Sets these files' lines in dist/SHA256SUMS (in place, or appended), keeping the others. A
 * SHA256SUMS.sig signed the old bytes, so it is removed (npm run image with a key signs them anew).
 */
export async function updateSums(entries: { name: string; sha256: string }[]): Promise<void> {
  await rm(join(DIST, "SHA256SUMS.sig"), { force: true });
  const file = join(DIST, "SHA256SUMS");
  const lines = existsSync(file) ? (await readFile(file, "utf8")).split("\n").filter(Boolean) : [];
  for (const { name, sha256 } of entries) {
    const line = `${sha256}  ${name}`;
    const at = lines.findIndex((l) => l.split(/\s+/)[1] === name);
    if (at >= 0) lines[at] = line;
    else lines.push(line);
  }
  await writeFile(file, `${lines.join("\n")}\n`);
}

/** The newest modification time of what a binary (and so the image) is built from. */
export async function sourcesMtime(): Promise<number> {
  const files = ["package.json", "package-lock.json", "scripts/build.ts", "scripts/image.ts"];
  for (const dir of ["src", "scripts/image"])
    for (const f of await readdir(join(ROOT, dir), { recursive: true })) files.push(join(dir, f));
  const times = await Promise.all(
    files.map((f) =>
      stat(join(ROOT, f)).then(
        (s) => s.mtimeMs,
        () => 0,
      ),
    ),
  );
  return Math.max(...times);
}

/**
 * As a program (the image tests read the build's facts so, rather than importing this module):
 * `bun scripts/image/project.ts` prints the project and sourcesMtime as JSON;
 * `bun scripts/image/project.ts carried <arch>...` writes each architecture's carried files (as the
 * build does) and prints, per architecture, its image info, the runtime layer's blob file and the files;
 * `bun scripts/image/project.ts facts <target>` prints that target's build facts.
 */
async function main(args: string[]): Promise<number> {
  const p = await project();
  if (args.length === 0) {
    process.stdout.write(`${JSON.stringify({ ...p, sourcesMtime: await sourcesMtime() })}\n`);
    return 0;
  }
  const rest = args.slice(1);
  if (args[0] === "facts" && rest.length === 1) {
    process.stdout.write(`${JSON.stringify(await buildFacts(p, rest[0]!))}\n`);
    return 0;
  }
  const arches = rest;
  if (args[0] !== "carried" || arches.some((a) => a !== "amd64" && a !== "arm64")) {
    process.stderr.write("usage: bun scripts/image/project.ts [carried <amd64|arm64>... | facts <target>]\n");
    return 2;
  }
  const all = await Promise.all(arches.map((arch) => carried(p, arch as Arch)));
  const out = all.map((c) => ({ arch: c.arch, info: c.info, runtimeLayer: c.files[0], files: c.files }));
  process.stdout.write(`${JSON.stringify(out)}\n`);
  return 0;
}

if (import.meta.main) process.exit(await main(process.argv.slice(2)));

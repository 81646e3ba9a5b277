/**
 * Helpers for the image integration test: `npm run image` once per test process when its archive
 * is missing or stale, an OCI layout check written independently of src/image/archive.ts, and
 * running the image's binary chrooted in its unpacked layers.
 */
import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Arch, ImageInfo } from "../../src/image/_aicr-image.ts";
import { gunzip } from "../../src/image/_layer.ts";

export const ROOT = join(import.meta.dir, "../..");
export const DIST = join(ROOT, "dist");
const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };
export const VERSION = pkg.version;
export const LAYOUT = join(DIST, `aicr-image-${VERSION}`);
export const ARCHIVE = `${LAYOUT}.tar`;
export const BINARIES = { amd64: join(DIST, "aicr-linux-x64"), arm64: join(DIST, "aicr-linux-arm64") };
export const HOST_ARCH = process.arch === "arm64" ? "arm64" : "amd64";
export const IS_ROOT = process.getuid?.() === 0;
export const HAS_SKOPEO = Bun.which("skopeo") !== null;
const COSIGN_SIGNATURE = "application/vnd.dev.cosign.artifact.sig.v1+json";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export async function run(argv: string[], options: { cwd?: string } = {}): Promise<Run> {
  const proc = Bun.spawn(argv, { cwd: options.cwd ?? ROOT, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

async function stale(): Promise<string | undefined> {
  if (!existsSync(ARCHIVE) || !existsSync(join(LAYOUT, "index.json"))) return "missing";
  const made = statSync(ARCHIVE).mtimeMs;
  const p = await project();
  if (made < p.sourcesMtime) return "older than the sources";
  for (const b of Object.values(BINARIES))
    if (!existsSync(b) || statSync(b).mtimeMs > made) return "older than a binary";
  const attestations = Object.entries(BINARIES).flatMap(([arch, b]) => [
    `${b}.spdx.json`,
    `${b}.provenance.json`,
    `${LAYOUT}.linux-${arch}.spdx.json`,
    `${LAYOUT}.linux-${arch}.provenance.json`,
  ]);
  if (attestations.some((f) => !existsSync(f))) return "missing an SBOM or provenance";
  const index = JSON.parse(await readFile(join(LAYOUT, "index.json"), "utf8"));
  const ref = index.manifests?.[0]?.annotations?.["io.containerd.image.name"];
  if (ref !== `${p.repository}:${p.tag}`) return `named ${ref}`;
  // the suites expect npm run image's unsigned output (a signed one is rebuilt: same image, no signatures)
  if (index.manifests.some((d: { artifactType?: string }) => d.artifactType === COSIGN_SIGNATURE))
    return "signed (npm run image --key)";
  const top = JSON.parse(
    await readFile(join(LAYOUT, "blobs/sha256", index.manifests[0].digest.slice(7)), "utf8"),
  );
  if (top.annotations?.["org.opencontainers.image.revision"] !== p.revision) return "of another revision";
  return undefined;
}

/** The build's facts, as scripts/image/project.ts prints them (the program, not its module). */
export interface Project {
  version: string;
  revision: string;
  repository: string;
  tag: string;
  /** When the sources the image is built from last changed (ms since the epoch). */
  sourcesMtime: number;
}

async function script(args: string[]): Promise<string> {
  const r = await run([process.execPath, ...args]);
  if (r.code !== 0) throw new Error(`bun ${args.join(" ")} failed (${r.code}):\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

export const project = async (): Promise<Project> => JSON.parse(await script(["scripts/image/project.ts"]));

/** One architecture's carried files as the build writes them: its image info and the runtime layer's blob. */
export interface Carried {
  arch: Arch;
  info: ImageInfo;
  runtimeLayer: string;
  files: string[];
}

export const carried = async (arches: readonly Arch[]): Promise<Carried[]> =>
  JSON.parse(await script(["scripts/image/project.ts", "carried", ...arches]));

/** scripts/image/runtime.ts check: whether a binary needs exactly what the runtime layer was declared for. */
export const checkBinaryNeeds = (binary: string, arch: Arch, name?: string): Promise<Run> =>
  run([process.execPath, "scripts/image/runtime.ts", "check", arch, binary, ...(name ? [name] : [])]);

let once: Promise<void> | undefined;

/** Runs `npm run image` (bun scripts/image.ts) unless its archive is up to date. */
export function ensureImage(): Promise<void> {
  once ??= (async () => {
    const why = await stale();
    if (!why) return;
    process.stderr.write(`image archive ${why}: running npm run image\n`);
    const result = await run([process.execPath, join(ROOT, "scripts/image.ts")]);
    if (result.code !== 0)
      throw new Error(`npm run image failed (${result.code}):\n${result.stdout}${result.stderr}`);
  })();
  return once;
}

export const sha256 = (data: Uint8Array): string =>
  `sha256:${createHash("sha256").update(data).digest("hex")}`;

export interface CheckedImage {
  platform: { os: string; architecture: string };
  digest: string;
  config: { architecture: string; os: string; config: Record<string, any>; rootfs: { diff_ids: string[] } };
  /** Layer blob paths, bottom first. */
  layers: string[];
}

/** A referrer index.json lists after the image: its manifest and its one layer's bytes. */
export interface CheckedReferrer {
  descriptor: { digest: string; artifactType: string; annotations?: Record<string, string> };
  manifest: Record<string, any>;
  /** The one layer's blob. */
  layer: Uint8Array;
}

/**
 * Walks an extracted OCI layout from index.json, checking every descriptor's size and digest and
 * every media type, and that no blob is left unreferenced; the entries after the tagged image are
 * referrers (untagged, each with an artifactType, one layer and a subject in the layout).
 * Independent of src/image/archive.ts.
 */
export async function checkLayout(
  dir: string,
): Promise<{ top: Record<string, any>; images: CheckedImage[]; referrers: CheckedReferrer[] }> {
  const layout = JSON.parse(await readFile(join(dir, "oci-layout"), "utf8"));
  if (layout.imageLayoutVersion !== "1.0.0") throw new Error(`oci-layout: ${JSON.stringify(layout)}`);
  const seen = new Set<string>();
  const blob = async (d: { digest: string; size: number }): Promise<Uint8Array> => {
    const [algo, hex] = d.digest.split(":");
    const data = new Uint8Array(await readFile(join(dir, "blobs", algo!, hex!)));
    if (data.length !== d.size)
      throw new Error(`${d.digest}: ${data.length} bytes, descriptor says ${d.size}`);
    if (sha256(data) !== d.digest) throw new Error(`${d.digest}: content hashes to ${sha256(data)}`);
    seen.add(hex!);
    return data;
  };
  const parse = async (d: { digest: string; size: number }) =>
    JSON.parse(new TextDecoder().decode(await blob(d)));
  const images: CheckedImage[] = [];
  const visit = async (d: {
    mediaType: string;
    digest: string;
    size: number;
    platform?: any;
  }): Promise<void> => {
    if (d.mediaType === "application/vnd.oci.image.index.v1+json") {
      for (const m of (await parse(d)).manifests) await visit(m);
      return;
    }
    if (d.mediaType !== "application/vnd.oci.image.manifest.v1+json")
      throw new Error(`media type ${d.mediaType}`);
    const manifest = await parse(d);
    if (manifest.config.mediaType !== "application/vnd.oci.image.config.v1+json")
      throw new Error("config type");
    const config = await parse(manifest.config);
    const layers: string[] = [];
    for (const l of manifest.layers) {
      if (l.mediaType !== "application/vnd.oci.image.layer.v1.tar+gzip")
        throw new Error(`layer type ${l.mediaType}`);
      const data = await blob(l);
      const diffId = sha256(gunzip(data));
      if (config.rootfs.diff_ids[layers.length] !== diffId) throw new Error(`${l.digest}: diff ID ${diffId}`);
      layers.push(join(dir, "blobs/sha256", l.digest.slice(7)));
    }
    images.push({ platform: d.platform, digest: d.digest, config, layers });
  };
  const index = JSON.parse(await readFile(join(dir, "index.json"), "utf8"));
  const [top, ...rest] = index.manifests;
  if (!top?.annotations?.["org.opencontainers.image.ref.name"])
    throw new Error("index.json's first entry is not tagged");
  await visit(top);
  const subjects = new Set([top.digest, ...images.map((i) => i.digest)]);
  const referrers: CheckedReferrer[] = [];
  for (const d of rest) {
    if (d.annotations?.["org.opencontainers.image.ref.name"])
      throw new Error(`referrer ${d.digest} is tagged`);
    if (d.mediaType !== "application/vnd.oci.image.manifest.v1+json" || !d.artifactType)
      throw new Error(`referrer ${d.digest}: media type ${d.mediaType}, artifactType ${d.artifactType}`);
    const manifest = await parse(d);
    if (manifest.artifactType !== d.artifactType)
      throw new Error(`referrer ${d.digest}: artifactType differs`);
    if (!subjects.has(manifest.subject?.digest))
      throw new Error(`referrer ${d.digest}: subject not in the layout`);
    await blob(manifest.config);
    if (manifest.layers.length !== 1)
      throw new Error(`referrer ${d.digest}: ${manifest.layers.length} layers`);
    referrers.push({ descriptor: d, manifest, layer: await blob(manifest.layers[0]) });
    subjects.add(d.digest);
  }
  const stray = (await readdir(join(dir, "blobs/sha256"))).filter((h) => !seen.has(h));
  if (stray.length > 0) throw new Error(`unreferenced blobs: ${stray.join(", ")}`);
  return { top, images, referrers };
}

export type Checked = Awaited<ReturnType<typeof checkLayout>>;

/** Extracts an archive with tar into `dir` and checks the layout there. */
export async function extractAndCheck(archive: string, dir: string): Promise<Checked> {
  await mkdir(dir, { recursive: true });
  const r = await run(["tar", "-xf", archive, "-C", dir]);
  if (r.code !== 0) throw new Error(`tar -xf ${archive}: ${r.stderr}`);
  return checkLayout(dir);
}

export function imageOf(checked: Checked, arch: string): CheckedImage {
  const found = checked.images.find((i) => i.platform.architecture === arch);
  if (!found) throw new Error(`no ${arch} image`);
  return found;
}

/** Unpacks the layers in order into `rootfs` with tar, as a container runtime would (no whiteouts here). */
export async function unpack(layers: string[], rootfs: string): Promise<void> {
  await mkdir(join(rootfs, "proc"), { recursive: true });
  for (const layer of layers) {
    const r = await run(["tar", "-xzf", layer, "-C", rootfs]);
    if (r.code !== 0) throw new Error(`tar -xzf ${layer}: ${r.stderr}`);
  }
}

/** Runs the image's entrypoint chrooted into `rootfs`, with its own /proc, as `user` (uid:gid). */
export function chroot(rootfs: string, user: string, args: string[]): Promise<Run> {
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  const inner = `mount -t proc proc ${q(join(rootfs, "proc"))} && exec chroot --userspec=${q(user)} ${q(rootfs)} ${args.map(q).join(" ")}`;
  return run(["unshare", "--mount", "--fork", "--pid", "sh", "-c", inner]);
}

/**
 * npm run image → dist/aicr-image-<version>/ (an OCI image layout) and dist/aicr-image-<version>.tar
 * (the same as one archive, plus Docker's manifest.json), for linux/amd64 and linux/arm64, with no
 * container engine. Byte for byte reproducible: the same checkout and caches give the same archive.
 * Builds dist/aicr-linux-x64 and -arm64 first when missing, older than the sources, or not carrying
 * this image's runtime layer and info (another revision, version or libc6). See docs/image.md.
 */
import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ARCHS, aicrImage, aicrLayout, binaryLayer } from "../src/image/_aicr-image.ts";
import { layoutArchive } from "../src/image/_layout.ts";
import {
  type Carried,
  carried,
  carries,
  DIST,
  project,
  ROOT,
  sourcesMtime,
  updateSums,
} from "./image/project.ts";
import { ARCHES, checkBinaryNeeds } from "./image/runtime.ts";

const started = performance.now();
const p = await project();
const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;

const binaryPath = (c: Carried): string => join(DIST, `aicr-${ARCHES[c.arch].target}`);

async function fresh(c: Carried, newest: number): Promise<boolean> {
  const path = binaryPath(c);
  if (!existsSync(path) || statSync(path).mtimeMs < newest) return false;
  return carries(new Uint8Array(await readFile(path)), c);
}

const all = await Promise.all(ARCHS.map((arch) => carried(p, arch)));
const newest = await sourcesMtime();
const stale = [];
for (const c of all) if (!(await fresh(c, newest))) stale.push(ARCHES[c.arch].target);
if (stale.length > 0) {
  process.stderr.write(`building ${stale.join(", ")} (missing, older than the sources, or another build)\n`);
  const build = Bun.spawn([process.execPath, join(ROOT, "scripts/build.ts"), "--targets", stale.join(",")], {
    stdout: "inherit",
    stderr: "inherit",
  });
  if ((await build.exited) !== 0) throw new Error("scripts/build.ts failed; no image written");
}

const images = [];
for (const c of all) {
  const bytes = new Uint8Array(await readFile(binaryPath(c)));
  if (!carries(bytes, c))
    throw new Error(`${binaryPath(c)} does not carry the ${c.arch} runtime layer and info`);
  checkBinaryNeeds(bytes, c.arch, binaryPath(c));
  images.push(aicrImage(c.info, c.runtime.layer, binaryLayer(bytes)));
}
const layout = aicrLayout(
  images,
  all.map((c) => c.info),
);
const archive = layoutArchive(layout);

const name = `aicr-image-${p.version}`;
const dir = join(DIST, name);
await rm(dir, { recursive: true, force: true });
for (const f of layout.files) {
  await mkdir(dirname(join(dir, f.path)), { recursive: true });
  await writeFile(join(dir, f.path), f.data);
}
const tar = join(DIST, `${name}.tar`);
await writeFile(`${tar}.tmp`, archive);
await rename(`${tar}.tmp`, tar);
await updateSums([{ name: `${name}.tar`, sha256: createHash("sha256").update(archive).digest("hex") }]);

console.log(`${p.repository}:${p.tag}  ${layout.digest}  (image index)`);
for (const [i, image] of images.entries()) {
  const compressed = image.layers.reduce((n, l) => n + l.size, 0);
  console.log(
    `  linux/${image.platform.architecture}  ${image.descriptor.digest}  ` +
      `(${mib(compressed)} compressed, runtime ${mib(image.layers[0]!.size)}, libc6 ${all[i]!.info.labels["run.aicr.runtime.libc6"]})`,
  );
}
console.log(
  `wrote dist/${name}/ and dist/${name}.tar (${mib(archive.length)}) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);

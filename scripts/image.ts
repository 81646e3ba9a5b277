/**
 * npm run image → dist/aicr-image-<version>/ (an OCI image layout) and dist/aicr-image-<version>.tar
 * (the same as one archive, plus Docker's manifest.json), for linux/amd64 and linux/arm64, with no
 * container engine. Each platform manifest carries its SBOM (SPDX 2.3) and provenance (in-toto, SLSA
 * v1) as OCI referrers, also written beside the archive (aicr-image-<version>.linux-<arch>.{spdx,
 * provenance}.json). Byte for byte reproducible: the same checkout and caches give the same files.
 * With --key <path> (or AICR_SIGNING_KEY=<path>) the archive is signed (cosign signatures as
 * referrers, as `aicr image sign` does) and dist/SHA256SUMS gets SHA256SUMS.sig; an encrypted cosign
 * key's password comes from AICR_SIGNING_KEY_PASSWORD, else COSIGN_PASSWORD.
 * Builds dist/aicr-linux-x64 and -arm64 first when missing, older than the sources, or not carrying
 * this image's runtime layer and info (another revision, version or libc6). See docs/image.md.
 */
import { createHash } from "node:crypto";
import { constants, existsSync, statSync } from "node:fs";
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { AicrError } from "../src/core/errors.ts";
import { INPUT_LIMITS, readInputText } from "../src/core/input-file.ts";
import { ARCHS, aicrImage, aicrLayout, binaryLayer } from "../src/image/_aicr-image.ts";
import { layoutArchive } from "../src/image/_layout.ts";
import { readTar } from "../src/image/_tar.ts";
import { type Attestation, imageAttestations } from "../src/image/attest/_image-attestations.ts";
import { loadSigningKey, type SigningKey } from "../src/image/sign/_keys.ts";
import { signBlob } from "../src/image/sign/blob.ts";
import { signArchive } from "../src/image/sign/sign-archive.ts";
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
const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;
const sha256 = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex");

/** --key <path> / --key=<path>, else $AICR_SIGNING_KEY; undefined when neither is given. */
function keyPath(argv: string[]): { path: string; from: string } | undefined {
  const at = argv.findIndex((a) => a === "--key" || a.startsWith("--key="));
  if (at >= 0) {
    const arg = argv[at]!;
    const path = arg.includes("=") ? arg.slice("--key=".length) : argv[at + 1];
    if (!path || path.startsWith("--"))
      throw new AicrError("INVALID_REQUEST", "--key needs the path of the signing key", {
        remedy: "npm run image -- --key cosign.key (a PEM ECDSA P-256 private key or a cosign key file)",
      });
    return { path, from: "--key" };
  }
  const env = process.env.AICR_SIGNING_KEY;
  return env ? { path: env, from: "AICR_SIGNING_KEY" } : undefined;
}

/** The signing key, read through the one bounded reader; its messages never quote the key. */
function signingKey(): SigningKey | undefined {
  const given = keyPath(process.argv.slice(2));
  if (!given) return undefined;
  const text = readInputText(given.path, {
    flag: given.from,
    what: "a PEM private key",
    maxBytes: INPUT_LIMITS.pem,
    remedy:
      "pass a readable PEM ECDSA P-256 private key or a cosign key file (cosign generate-key-pair writes cosign.key)",
  });
  const password = process.env.AICR_SIGNING_KEY_PASSWORD ?? process.env.COSIGN_PASSWORD;
  return loadSigningKey(text, { flag: given.from, path: given.path }, { password });
}

/** Writes through a temp file beside `path` (O_EXCL|O_NOFOLLOW), then renames it over `path`. */
async function writeAtomic(path: string, data: Uint8Array | string): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`;
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const handle = await open(temp, flags, 0o644);
  try {
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
  await rename(temp, path);
}

async function main(): Promise<void> {
  // the key first: a wrong path or password should not wait for the build
  const key = signingKey();
  const p = await project();
  const binaryPath = (c: Carried): string => join(DIST, `aicr-${ARCHES[c.arch].target}`);

  // a binary is fresh with its SBOM and provenance beside it (scripts/build.ts writes the three)
  async function fresh(c: Carried, newest: number): Promise<boolean> {
    const path = binaryPath(c);
    if ([path, `${path}.spdx.json`, `${path}.provenance.json`].some((f) => !existsSync(f))) return false;
    if (statSync(path).mtimeMs < newest) return false;
    return carries(new Uint8Array(await readFile(path)), c);
  }

  const all = await Promise.all(ARCHS.map((arch) => carried(p, arch)));
  const newest = await sourcesMtime();
  const stale = [];
  for (const c of all) if (!(await fresh(c, newest))) stale.push(ARCHES[c.arch].target);
  if (stale.length > 0) {
    process.stderr.write(
      `building ${stale.join(", ")} (missing, older than the sources, or another build)\n`,
    );
    const build = Bun.spawn(
      [process.execPath, join(ROOT, "scripts/build.ts"), "--targets", stale.join(",")],
      {
        stdout: "inherit",
        stderr: "inherit",
      },
    );
    if ((await build.exited) !== 0) throw new Error("scripts/build.ts failed; no image written");
  }

  const images = [];
  const attestations: Attestation[][] = [];
  for (const c of all) {
    const bytes = new Uint8Array(await readFile(binaryPath(c)));
    if (!carries(bytes, c))
      throw new Error(`${binaryPath(c)} does not carry the ${c.arch} runtime layer and info`);
    checkBinaryNeeds(bytes, c.arch, binaryPath(c));
    const image = aicrImage(c.info, c.runtime.layer, binaryLayer(bytes));
    images.push(image);
    attestations.push(imageAttestations(c.info, image, sha256(bytes)));
  }
  const layout = aicrLayout(
    images,
    all.map((c) => c.info),
    attestations.flat().map((a) => a.artifact),
  );
  const built = layoutArchive(layout);
  const signed = key ? signArchive(built, key) : undefined;
  const archive = signed?.bytes ?? built;

  const name = `aicr-image-${p.version}`;
  const dir = join(DIST, name);
  await rm(dir, { recursive: true, force: true });
  // the directory holds the archive's files (with the signatures when signed)
  for (const m of readTar(archive)) {
    if (m.type !== "file") continue;
    await mkdir(dirname(join(dir, m.path)), { recursive: true });
    await writeAtomic(join(dir, m.path), m.data);
  }
  await writeAtomic(join(DIST, `${name}.tar`), archive);
  for (const a of attestations.flat()) await writeAtomic(join(DIST, a.name), a.data);
  await updateSums([
    { name: `${name}.tar`, sha256: sha256(archive) },
    ...attestations.flat().map((a) => ({ name: a.name, sha256: sha256(a.data) })),
  ]);
  if (key) {
    const sums = new Uint8Array(await readFile(join(DIST, "SHA256SUMS")));
    await writeAtomic(join(DIST, "SHA256SUMS.sig"), signBlob(sums, key));
  }

  console.log(`${p.repository}:${p.tag}  ${layout.digest}  (image index)`);
  for (const [i, image] of images.entries()) {
    const compressed = image.layers.reduce((n, l) => n + l.size, 0);
    console.log(
      `  linux/${image.platform.architecture}  ${image.descriptor.digest}  ` +
        `(${mib(compressed)} compressed, runtime ${mib(image.layers[0]!.size)}, libc6 ${all[i]!.info.labels["run.aicr.runtime.libc6"]})`,
    );
    for (const a of attestations[i]!) console.log(`    ${a.artifact.descriptor.digest}  ${a.name}`);
  }
  if (signed)
    console.log(
      `signed ${signed.signed.length} manifests for ${signed.repository} (${signed.added} signatures added) and dist/SHA256SUMS (SHA256SUMS.sig)`,
    );
  console.log(
    `wrote dist/${name}/ and dist/${name}.tar (${mib(archive.length)}) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

try {
  await main();
} catch (err) {
  if (!(err instanceof AicrError)) throw err;
  process.stderr.write(`npm run image: ${err.message}${err.remedy ? `\n  ${err.remedy}` : ""}\n`);
  process.exit(2);
}

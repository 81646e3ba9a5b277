/**
 * The build facts of one target (src/image/attest/_facts.ts): which npm packages have code in the
 * binary — Bun's --metafile of the same bundle, its inputs with bytes in the output mapped to
 * package-lock.json — Bun's runtime package, the lockfile's digest and the command that rebuilds it.
 * scripts/build.ts embeds them in linux glibc binaries and writes each binary's SBOM and provenance.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type BuildFacts,
  bundledPackages,
  type Lockfile,
  type Metafile,
  type NpmPackage,
  runtimePackage,
} from "../../src/image/attest/_facts.ts";
import type { Project } from "./project.ts";

const ROOT = join(import.meta.dir, "../..");
const DIST = join(ROOT, "dist");

/** The flags that decide what goes into the bundle: the compile and the metafile pass share them. */
export const bundleFlags = (p: Project): string[] => [
  "--minify",
  "--format=esm",
  `--define=AICR_VERSION=${JSON.stringify(p.version)}`,
  `--define=AICR_IMAGE_REPOSITORY=${JSON.stringify(p.repository)}`,
  `--define=AICR_REVISION=${JSON.stringify(p.revision)}`,
  `--define=AICR_BUILT=${JSON.stringify(p.built)}`,
];

/** The command that rebuilds exactly one target's binary (recorded in its facts, whoever ran the build). */
export const buildCommand = (target: string): string => `bun scripts/build.ts --targets ${target}`;

/** A package's own package.json licence (`license`, or the old `{ type }` form), if it declares one. */
function ownLicense(key: string): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(ROOT, key, "package.json"), "utf8")) as {
      license?: string | { type?: string };
    };
    return typeof pkg.license === "string" ? pkg.license : pkg.license?.type;
  } catch {
    return undefined;
  }
}

let lock: Promise<{ json: Lockfile; sha256: string }> | undefined;
const lockfile = (): Promise<{ json: Lockfile; sha256: string }> =>
  (lock ??= readFile(join(ROOT, "package-lock.json")).then((bytes) => ({
    json: JSON.parse(bytes.toString("utf8")) as Lockfile,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  })));

/** The npm packages with code in the output a metafile describes. */
export async function packagesOf(metafile: string): Promise<NpmPackage[]> {
  const meta = JSON.parse(await readFile(metafile, "utf8")) as Metafile;
  return bundledPackages(meta, (await lockfile()).json, ownLicense);
}

let bundled: Promise<NpmPackage[]> | undefined;

/** The packages in src/main.ts's bundle: one non-compiled `bun build --metafile` (about a second), once. */
function bundledOnce(p: Project): Promise<NpmPackage[]> {
  bundled ??= (async () => {
    const dir = join(DIST, ".build", `metafile-${process.pid}`);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    try {
      const args = ["build", ...bundleFlags(p), "--target=bun", `--metafile=${join(dir, "meta.json")}`];
      const proc = Bun.spawn([process.execPath, ...args, join(ROOT, "src/main.ts"), "--outdir", dir], {
        cwd: ROOT,
        stdout: "pipe",
        stderr: "pipe",
      });
      const [out, err, code] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ]);
      if (code !== 0 || /error:/i.test(`${out}${err}`))
        throw new Error(`bun build --metafile failed (exit ${code}): ${`${out}${err}`.trim()}`);
      return await packagesOf(join(dir, "meta.json"));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  return bundled;
}

/** Everything the SBOM and provenance of `target`'s binary say, before it is compiled. */
export async function buildFacts(p: Project, target: string): Promise<BuildFacts> {
  const [packages, lockFile] = await Promise.all([bundledOnce(p), lockfile()]);
  return {
    version: p.version,
    revision: p.revision,
    built: p.built,
    repository: p.repository,
    license: p.labels["org.opencontainers.image.licenses"] ?? "NOASSERTION",
    target,
    command: buildCommand(target),
    bun: Bun.version,
    lockfileSha256: lockFile.sha256,
    runtime: runtimePackage(lockFile.json, target, Bun.version),
    packages,
  };
}

/**
 * npm run build      → dist/aicr for this host
 * npm run build:all  → dist/aicr-<target> for each release target, its SBOM (aicr-<target>.spdx.json)
 *                      and provenance (aicr-<target>.provenance.json), plus dist/SHA256SUMS.
 * --targets a,b      → only those targets; their SHA256SUMS lines are updated, the others kept.
 * A target whose runtime cannot be fetched is reported and skipped, never silently missing.
 * A linux glibc binary carries its image's runtime layer and image info with its build facts
 * (Bun.embeddedFiles), so `aicr image save` can write the image, its SBOM and provenance without
 * network or container engine (docs/image.md).
 */
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Arch } from "../src/image/_aicr-image.ts";
import { readElf } from "../src/image/_elf.ts";
import type { BuildFacts, NpmPackage } from "../src/image/attest/_facts.ts";
import { binaryProvenance } from "../src/image/attest/_provenance.ts";
import { attestationBytes, binarySbom } from "../src/image/attest/_spdx.ts";
import { buildFacts, bundleFlags, packagesOf } from "./image/facts.ts";
import { carried, project, updateSums } from "./image/project.ts";

const root = join(import.meta.dir, "..");
// version, revision and the image the binary deploys by default (AICR_IMAGE_REPOSITORY overrides)
const p = await project();
const TARGETS = ["linux-x64", "linux-arm64", "darwin-arm64", "linux-x64-musl"] as const;
/** The targets whose binaries go into the image, and so carry its runtime layer. */
const IMAGE_ARCH: Partial<Record<string, Arch>> = { "linux-x64": "amd64", "linux-arm64": "arm64" };

// --format=esm is required with --bytecode: without it bun prints an error, exits 0, and the binary crashes at start.
const FLAGS = [
  "build",
  "--compile",
  "--bytecode",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  // --minify, --format and the defines: what decides the bundle, shared with the facts' metafile pass
  ...bundleFlags(p),
  // embedded files keep their own names (Bun.embeddedFiles), no content hash
  "--asset-naming=[name].[ext]",
  join(root, "src/main.ts"),
];

/**
 * Compiles into dist/.build/<key>/aicr, then moves it to `outfile`: Bun records the output's file
 * name in the binary, so every build is named aicr and dist/aicr equals dist/aicr-linux-x64 on x64.
 * With `facts`, the compile's own metafile must name exactly the packages the facts list (they were
 * taken from a separate bundle pass before the compile, to be embedded in it).
 */
async function compile(
  outfile: string,
  target: string | undefined,
  assets: string[],
  facts?: BuildFacts,
): Promise<{ ok: boolean; output: string }> {
  const dir = join(root, "dist/.build", target ?? "host");
  await rm(dir, { recursive: true, force: true });
  const metafile = join(dir, "meta.json");
  const args = [
    ...FLAGS,
    ...assets,
    "--outfile",
    join(dir, "aicr"),
    `--metafile=${metafile}`,
    ...(target ? [`--target=bun-${target}`] : []),
  ];
  const proc = Bun.spawn([process.execPath, ...args], { cwd: root, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const output = `${out}${err}`;
  // bun can exit 0 after "Failed to generate bytecode"; treat any error line as failure.
  let ok = code === 0 && !/error:/i.test(output);
  let problem = "";
  if (ok && facts) {
    const compiled = await packagesOf(metafile).catch((e: Error) => e);
    problem = compiled instanceof Error ? compiled.message : packageDifference(facts.packages, compiled);
    ok = problem === "";
  }
  if (ok) await rename(join(dir, "aicr"), outfile);
  await rm(dir, { recursive: true, force: true });
  return { ok, output: problem ? `${output}error: ${problem}\n` : output };
}

const ids = (list: NpmPackage[]): string[] => list.map((x) => `${x.name}@${x.version}`);

/** Empty when the compiled bundle holds the packages the facts list, else what differs. */
function packageDifference(listed: NpmPackage[], compiled: NpmPackage[]): string {
  if (JSON.stringify(listed) === JSON.stringify(compiled)) return "";
  const a = new Set(ids(listed));
  const b = new Set(ids(compiled));
  const extra = [...b].filter((x) => !a.has(x));
  const missing = [...a].filter((x) => !b.has(x));
  return `the compiled binary's packages differ from its build facts (in the binary only: ${extra.join(", ") || "none"}; in the facts only: ${missing.join(", ") || "none"})`;
}

/** The runtime layer and image info to embed, or why there are none for this target. */
async function assetsFor(
  arch: Arch | undefined,
  facts: BuildFacts | undefined,
): Promise<{ files: string[]; problem?: string }> {
  if (!arch || !facts) return { files: [] };
  try {
    return { files: (await carried(p, arch, facts)).files };
  } catch (err) {
    return { files: [], problem: `runtime layer for ${arch} unavailable: ${(err as Error).message}` };
  }
}

/** The build facts of a target, or why there are none (a lockfile out of step, a devDependency bundled). */
async function factsFor(target: string): Promise<{ facts?: BuildFacts; problem?: string }> {
  try {
    return { facts: await buildFacts(p, target) };
  } catch (err) {
    return { problem: `build facts for ${target}: ${(err as Error).message}` };
  }
}

/** Writes a new file beside the binaries: temp file (O_EXCL|O_NOFOLLOW), then renamed over the old one. */
async function writeDist(name: string, data: Uint8Array): Promise<void> {
  const path = join(root, "dist", name);
  const temp = `${path}.${process.pid}.tmp`;
  const handle = await open(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o644,
  );
  try {
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
  await rename(temp, path);
}

/** dist/aicr-<target>.spdx.json and .provenance.json for a built binary; their names and digests. */
async function attest(name: string, facts: BuildFacts): Promise<{ name: string; sha256: string }[]> {
  const binary = { name, sha256: await sha256(join(root, "dist", name)) };
  const files = [
    { name: `${name}.spdx.json`, data: attestationBytes(binarySbom(facts, binary)) },
    { name: `${name}.provenance.json`, data: attestationBytes(binaryProvenance(facts, binary)) },
  ];
  for (const f of files) await writeDist(f.name, f.data);
  return [
    binary,
    ...files.map((f) => ({ name: f.name, sha256: createHash("sha256").update(f.data).digest("hex") })),
  ];
}

/** The host's image arch when this bun is a linux glibc build (its loader says so), else none. */
async function hostArch(): Promise<Arch | undefined> {
  if (process.platform !== "linux") return undefined;
  const interp = readElf(await Bun.file(process.execPath).bytes()).interpreter ?? "";
  if (!interp.includes("ld-linux")) return undefined;
  return IMAGE_ARCH[`linux-${process.arch}`];
}

async function smoke(binary: string): Promise<void> {
  const proc = Bun.spawn([binary, "--version"], { stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  if (code !== 0 || out.split(" ")[0] !== p.version) {
    const err = await new Response(proc.stderr).text();
    throw new Error(
      `smoke test failed: ${binary} --version exited ${code} printing ${JSON.stringify(out)} ${err}`,
    );
  }
}

const sha256 = async (path: string): Promise<string> =>
  createHash("sha256")
    .update(await readFile(path))
    .digest("hex");

function selectedTargets(): readonly string[] | undefined {
  if (process.argv.includes("--all")) return TARGETS;
  const at = process.argv.findIndex((a) => a === "--targets" || a.startsWith("--targets="));
  if (at < 0) return undefined;
  const arg = process.argv[at]!;
  const list = (arg.includes("=") ? arg.split("=")[1]! : (process.argv[at + 1] ?? "")).split(",");
  const unknown = list.filter((t) => !(TARGETS as readonly string[]).includes(t));
  if (unknown.length > 0 || list.length === 0) {
    process.stderr.write(`unknown target(s) ${unknown.join(", ")}; known: ${TARGETS.join(", ")}\n`);
    process.exit(2);
  }
  return list;
}

await mkdir(join(root, "dist"), { recursive: true });
const targets = selectedTargets();

if (!targets) {
  const out = join(root, "dist/aicr");
  const arch = await hostArch();
  // the facts of the target this host build equals (dist/aicr is byte-identical to dist/aicr-linux-x64)
  const known = arch ? await factsFor(`linux-${arch === "amd64" ? "x64" : "arm64"}`) : {};
  const assets = known.problem ? { files: [], problem: known.problem } : await assetsFor(arch, known.facts);
  const result = await compile(
    out,
    undefined,
    assets.files,
    assets.files.length > 0 ? known.facts : undefined,
  );
  if (!result.ok) {
    process.stderr.write(result.output);
    process.exit(1);
  }
  await smoke(out);
  process.stderr.write(`built dist/aicr ${p.version}\n`);
  // the binary works without it; only `aicr image save` needs it, and says so
  if (assets.problem)
    process.stderr.write(`WARNING: dist/aicr carries no runtime layer: ${assets.problem}\n`);
} else {
  const built: { name: string; facts: BuildFacts }[] = [];
  const skipped: string[] = [];
  for (const target of targets) {
    const name = `aicr-${target}`;
    const { facts, problem } = await factsFor(target);
    const assets = facts ? await assetsFor(IMAGE_ARCH[target], facts) : { files: [], problem };
    const result =
      !facts || assets.problem
        ? { ok: false, output: assets.problem ?? "" }
        : await compile(join(root, "dist", name), target, assets.files, facts);
    if (result.ok && facts) built.push({ name, facts });
    else {
      for (const f of [name, `${name}.spdx.json`, `${name}.provenance.json`])
        await rm(join(root, "dist", f), { force: true });
      skipped.push(`${target}: ${result.output.trim().split("\n").pop()}`);
    }
    process.stderr.write(`${result.ok ? "built  " : "SKIPPED"} ${name}\n`);
  }
  const sums = [];
  for (const b of built) sums.push(...(await attest(b.name, b.facts)));
  // --all starts SHA256SUMS afresh (npm run image adds its archive's line after); --targets updates lines
  if (targets === TARGETS) await rm(join(root, "dist/SHA256SUMS"), { force: true });
  await updateSums(sums);
  process.stderr.write(
    `wrote dist/SHA256SUMS (${built.length} binaries, each with its .spdx.json SBOM and .provenance.json)\n`,
  );
  if (skipped.length > 0) {
    process.stderr.write(
      `WARNING: ${skipped.length} target(s) skipped and NOT in SHA256SUMS:\n  ${skipped.join("\n  ")}\n`,
    );
    process.exit(3);
  }
}

/**
 * npm run build      → dist/aicr for this host
 * npm run build:all  → dist/aicr-<target> for each release target, plus dist/SHA256SUMS.
 * --targets a,b      → only those targets; their SHA256SUMS lines are updated, the others kept.
 * A target whose runtime cannot be fetched is reported and skipped, never silently missing.
 * A linux glibc binary carries its image's runtime layer and image info (Bun.embeddedFiles), so
 * `aicr image save` can write the image without network or container engine (docs/image.md).
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Arch } from "../src/image/_aicr-image.ts";
import { readElf } from "../src/image/_elf.ts";
import { carried, project, updateSums } from "./image/project.ts";

const root = join(import.meta.dir, "..");
// version, revision and the image the binary deploys by default (AICR_IMAGE_REPOSITORY overrides)
const facts = await project();
const TARGETS = ["linux-x64", "linux-arm64", "darwin-arm64", "linux-x64-musl"] as const;
/** The targets whose binaries go into the image, and so carry its runtime layer. */
const IMAGE_ARCH: Partial<Record<string, Arch>> = { "linux-x64": "amd64", "linux-arm64": "arm64" };

// --format=esm is required with --bytecode: without it bun prints an error, exits 0, and the binary crashes at start.
const FLAGS = [
  "build",
  "--compile",
  "--minify",
  "--bytecode",
  "--format=esm",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  `--define=AICR_VERSION=${JSON.stringify(facts.version)}`,
  `--define=AICR_IMAGE_REPOSITORY=${JSON.stringify(facts.repository)}`,
  `--define=AICR_REVISION=${JSON.stringify(facts.revision)}`,
  `--define=AICR_BUILT=${JSON.stringify(facts.built)}`,
  // embedded files keep their own names (Bun.embeddedFiles), no content hash
  "--asset-naming=[name].[ext]",
  join(root, "src/main.ts"),
];

/**
 * Compiles into dist/.build/<key>/aicr, then moves it to `outfile`: Bun records the output's file
 * name in the binary, so every build is named aicr and dist/aicr equals dist/aicr-linux-x64 on x64.
 */
async function compile(
  outfile: string,
  target: string | undefined,
  assets: string[],
): Promise<{ ok: boolean; output: string }> {
  const dir = join(root, "dist/.build", target ?? "host");
  await rm(dir, { recursive: true, force: true });
  const args = [
    ...FLAGS,
    ...assets,
    "--outfile",
    join(dir, "aicr"),
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
  const ok = code === 0 && !/error:/i.test(output);
  if (ok) await rename(join(dir, "aicr"), outfile);
  await rm(dir, { recursive: true, force: true });
  return { ok, output };
}

/** The runtime layer and image info to embed, or why there are none for this target. */
async function assetsFor(arch: Arch | undefined): Promise<{ files: string[]; problem?: string }> {
  if (!arch) return { files: [] };
  try {
    return { files: (await carried(facts, arch)).files };
  } catch (err) {
    return { files: [], problem: `runtime layer for ${arch} unavailable: ${(err as Error).message}` };
  }
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
  if (code !== 0 || out.split(" ")[0] !== facts.version) {
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
  const assets = await assetsFor(await hostArch());
  const result = await compile(out, undefined, assets.files);
  if (!result.ok) {
    process.stderr.write(result.output);
    process.exit(1);
  }
  await smoke(out);
  process.stderr.write(`built dist/aicr ${facts.version}\n`);
  // the binary works without it; only `aicr image save` needs it, and says so
  if (assets.problem)
    process.stderr.write(`WARNING: dist/aicr carries no runtime layer: ${assets.problem}\n`);
} else {
  const built: string[] = [];
  const skipped: string[] = [];
  for (const target of targets) {
    const name = `aicr-${target}`;
    const assets = await assetsFor(IMAGE_ARCH[target]);
    const result = assets.problem
      ? { ok: false, output: assets.problem }
      : await compile(join(root, "dist", name), target, assets.files);
    if (result.ok) built.push(name);
    else {
      await rm(join(root, "dist", name), { force: true });
      skipped.push(`${target}: ${result.output.trim().split("\n").pop()}`);
    }
    process.stderr.write(`${result.ok ? "built  " : "SKIPPED"} ${name}\n`);
  }
  const sums = await Promise.all(
    built.map(async (name) => ({ name, sha256: await sha256(join(root, "dist", name)) })),
  );
  // --all starts SHA256SUMS afresh (npm run image adds its archive's line after); --targets updates lines
  if (targets === TARGETS) await rm(join(root, "dist/SHA256SUMS"), { force: true });
  await updateSums(sums);
  process.stderr.write(`wrote dist/SHA256SUMS (${built.length} binaries)\n`);
  if (skipped.length > 0) {
    process.stderr.write(
      `WARNING: ${skipped.length} target(s) skipped and NOT in SHA256SUMS:\n  ${skipped.join("\n  ")}\n`,
    );
    process.exit(3);
  }
}

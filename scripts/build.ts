/**
 * npm run build      → dist/aicr for this host
 * npm run build:all  → dist/aicr-<target> for each release target, plus dist/SHA256SUMS.
 * A target whose runtime cannot be fetched is reported and skipped, never silently missing.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as {
  version: string;
  config: { imageRepository: string };
};
// The image the binary deploys by default: a build-time setting (AICR_IMAGE_REPOSITORY overrides).
const imageRepository = process.env.AICR_IMAGE_REPOSITORY || pkg.config.imageRepository;
const revision = Bun.spawnSync(["git", "rev-parse", "HEAD"], { cwd: root }).stdout.toString().trim();
const TARGETS = ["linux-x64", "linux-arm64", "darwin-arm64", "linux-x64-musl"] as const;

// --format=esm is required with --bytecode: without it bun prints an error, exits 0, and the binary crashes at start.
const FLAGS = [
  "build",
  "--compile",
  "--minify",
  "--bytecode",
  "--format=esm",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  `--define=AICR_VERSION=${JSON.stringify(pkg.version)}`,
  `--define=AICR_IMAGE_REPOSITORY=${JSON.stringify(imageRepository)}`,
  `--define=AICR_REVISION=${JSON.stringify(revision || "unknown")}`,
  join(root, "src/main.ts"),
];

async function compile(outfile: string, target?: string): Promise<{ ok: boolean; output: string }> {
  const args = [...FLAGS, "--outfile", outfile, ...(target ? [`--target=bun-${target}`] : [])];
  const proc = Bun.spawn([process.execPath, ...args], { cwd: root, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const output = `${out}${err}`;
  // bun can exit 0 after "Failed to generate bytecode"; treat any error line as failure.
  return { ok: code === 0 && !/error:/i.test(output), output };
}

async function smoke(binary: string): Promise<void> {
  const proc = Bun.spawn([binary, "--version"], { stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  if (code !== 0 || out.trim() !== pkg.version) {
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

await mkdir(join(root, "dist"), { recursive: true });

if (!process.argv.includes("--all")) {
  const out = join(root, "dist/aicr");
  const result = await compile(out);
  if (!result.ok) {
    process.stderr.write(result.output);
    process.exit(1);
  }
  await smoke(out);
  process.stderr.write(`built dist/aicr ${pkg.version}\n`);
} else {
  const built: string[] = [];
  const skipped: string[] = [];
  for (const target of TARGETS) {
    const name = `aicr-${target}`;
    const result = await compile(join(root, "dist", name), target);
    if (result.ok) built.push(name);
    else {
      await rm(join(root, "dist", name), { force: true });
      skipped.push(`${target}: ${result.output.trim().split("\n").pop()}`);
    }
    process.stderr.write(`${result.ok ? "built  " : "SKIPPED"} ${name}\n`);
  }
  const sums = await Promise.all(built.map(async (n) => `${await sha256(join(root, "dist", n))}  ${n}`));
  await writeFile(join(root, "dist/SHA256SUMS"), `${sums.join("\n")}\n`);
  process.stderr.write(`wrote dist/SHA256SUMS (${built.length} binaries)\n`);
  if (skipped.length > 0) {
    process.stderr.write(
      `WARNING: ${skipped.length} target(s) skipped and NOT in SHA256SUMS:\n  ${skipped.join("\n  ")}\n`,
    );
    process.exit(3);
  }
}

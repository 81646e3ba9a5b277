/**
 * Builds the ecosystem's own tools that the supply-chain tests run against our artifacts, from the Go
 * module proxy with `go install <package>@<version>` (test tools, never shipped), and the test
 * registry WITH the referrers API (test/tools/registry/, go-containerregistry's pkg/registry).
 * Each lands in its own directory of ~/.cache/aicr/tools/ (AICR_CACHE_DIR moves the root), outside
 * the work tree like the control plane (test/control-plane/build.ts), so a warm run costs nothing:
 *
 *   crane-v0.22.1/crane      go-containerregistry's registry client
 *   oras-v1.3.6/oras         ORAS: discover, pull and attach OCI 1.1 artifacts
 *   syft-v1.57.1/syft        Anchore's SBOM generator
 *   cosign-v2.6.5/cosign     Sigstore's signer and verifier
 *   registry-<hash>/registry the referrers-API registry, keyed by the hash of its module's sources
 *
 * A tool whose build fails leaves `<name>-<version>.failed` (the reason: go's last lines) beside
 * the directories; tests that need it skip naming that reason, and a later run tries again only
 * with --retry (a refused build costs minutes, every run).
 *
 *   bun test/tools/build.ts [--retry]      builds what is missing, prints one line per tool
 *   import { buildTools } from ...         the same, for test support (test/tools/tools.ts)
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const TOOLS_MODULE_DIR = import.meta.dir;
const REGISTRY_DIR = join(TOOLS_MODULE_DIR, "registry");

export type ToolName = "crane" | "oras" | "syft" | "cosign" | "registry";

/** The pinned tools: the package `go install` builds and its module version. */
export const PINNED: Record<Exclude<ToolName, "registry">, { pkg: string; version: string }> = {
  crane: { pkg: "github.com/google/go-containerregistry/cmd/crane", version: "v0.22.1" },
  oras: { pkg: "oras.land/oras/cmd/oras", version: "v1.3.6" },
  syft: { pkg: "github.com/anchore/syft/cmd/syft", version: "v1.57.1" },
  cosign: { pkg: "github.com/sigstore/cosign/v2/cmd/cosign", version: "v2.6.5" },
};
export const TOOL_NAMES: ToolName[] = ["crane", "oras", "syft", "cosign", "registry"];

/** The registry module's sources: go.mod, go.sum and its `.go` files. */
function registryHash(): string {
  const h = createHash("sha256");
  for (const f of readdirSync(REGISTRY_DIR).sort())
    if (f.endsWith(".go") || f === "go.mod" || f === "go.sum")
      h.update(f)
        .update("\0")
        .update(readFileSync(join(REGISTRY_DIR, f)))
        .update("\0");
  return h.digest("hex").slice(0, 16);
}

export function toolsCacheDir(): string {
  return join(process.env.AICR_CACHE_DIR ?? join(homedir(), ".cache/aicr"), "tools");
}

/** `<name>-<version>` (the registry: `registry-<source hash>`). */
export function toolKey(name: ToolName): string {
  return name === "registry" ? `registry-${registryHash()}` : `${name}-${PINNED[name].version}`;
}

export type ToolResult =
  | { name: ToolName; path: string; built: boolean; seconds: number }
  | { name: ToolName; failed: string };

const GO_ENV = {
  // static binaries, no C toolchain needed; the go directive's own Go (never a download: see README)
  CGO_ENABLED: "0",
  GOTOOLCHAIN: "local",
  GOFLAGS: "-buildvcs=false -trimpath",
};

/** One line for a test's name: the failure's first and last lines, and where the whole output is. */
const summary = (reason: string, file: string): string => {
  const lines = reason.trim().split("\n");
  return `${lines[0]}${lines.length > 1 ? ` … ${lines.at(-1)}` : ""} (${file})`;
};

/** The last lines of go's output: the reason a build failed. */
const tail = (text: string, lines = 15): string => text.trimEnd().split("\n").slice(-lines).join("\n");

async function go(args: string[], env: Record<string, string>, cwd?: string): Promise<string | undefined> {
  const proc = Bun.spawn(["go", ...args], {
    cwd: cwd ?? toolsCacheDir(),
    env: { ...process.env, ...GO_ENV, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return (await proc.exited) === 0 ? undefined : tail(`${out}${err}`) || `go exited ${proc.exitCode}`;
}

async function buildOne(name: ToolName, retry: boolean): Promise<ToolResult> {
  const root = toolsCacheDir();
  const key = toolKey(name);
  const dir = join(root, key);
  const path = join(dir, name);
  const failedFile = join(root, `${key}.failed`);
  if (existsSync(path)) return { name, path, built: false, seconds: 0 };
  if (existsSync(failedFile) && !retry)
    return { name, failed: summary(readFileSync(failedFile, "utf8"), failedFile) };
  rmSync(failedFile, { force: true });
  mkdirSync(root, { recursive: true });
  const tmp = join(root, `${key}.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp);
  const started = performance.now();
  process.stderr.write(`building ${key} into ${dir} …\n`);
  const failure =
    name === "registry"
      ? await go(
          ["build", "-o", join(tmp, name), "."],
          { GOFLAGS: `${GO_ENV.GOFLAGS} -mod=mod` },
          REGISTRY_DIR,
        )
      : await go(["install", `${PINNED[name].pkg}@${PINNED[name].version}`], { GOBIN: tmp });
  if (failure !== undefined || !existsSync(join(tmp, name))) {
    rmSync(tmp, { recursive: true, force: true });
    const reason = `go ${name === "registry" ? "build" : "install"} of ${key} failed:\n${failure ?? "no binary"}`;
    writeFileSync(failedFile, `${reason}\n`);
    process.stderr.write(`${reason}\n`);
    return { name, failed: summary(reason, failedFile) };
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  const seconds = (performance.now() - started) / 1000;
  process.stderr.write(`built ${key} in ${seconds.toFixed(1)} s\n`);
  // older registry builds (other source hashes) are stale
  if (name === "registry")
    for (const other of readdirSync(root))
      if (other.startsWith("registry-") && other !== key)
        rmSync(join(root, other), { recursive: true, force: true });
  return { name, path, built: true, seconds };
}

let building: Promise<ToolResult[]> | undefined;

/** Every tool, built one after another (each `go` build already uses every core) where missing. */
export function buildTools(retry = false): Promise<ToolResult[]> {
  building ??= (async () => {
    const results: ToolResult[] = [];
    for (const name of TOOL_NAMES) results.push(await buildOne(name, retry));
    return results;
  })();
  return building;
}

if (import.meta.main) {
  const results = await buildTools(process.argv.includes("--retry"));
  for (const r of results)
    process.stdout.write(
      "path" in r
        ? `${r.name}\t${r.path}${r.built ? `\t(built in ${r.seconds.toFixed(1)} s)` : ""}\n`
        : `${r.name}\tNOT BUILT: ${r.failed}; tests that need it skip (--retry tries again)\n`,
    );
}

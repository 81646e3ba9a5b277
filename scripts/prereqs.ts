/**
 * The host prerequisites of `npm test`, made sure of before anything else runs: every Debian package a
 * suite needs is installed here when this process may (root, apt-get present); otherwise the run stops
 * before the first test with one line naming what is missing and the command that installs it. No
 * suite skips or fails later for a missing host tool.
 *
 *   bun scripts/prereqs.ts           check, install what is missing (root + apt), exit 1 if still missing
 *   bun scripts/prereqs.ts --check   check only
 *   bun scripts/prereqs.ts --list    the packages, what proves each and what needs it, as JSON
 *
 * Go is the one toolchain apt cannot give at the version needed (the test control plane and node are
 * built from Kubernetes' modules with Go ≥ 1.26): it is checked and named, never installed.
 */
import { type SpawnSyncOptions, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

/** A Debian package and the executables whose presence proves it is installed. */
interface HostPackage {
  pkg: string;
  provides: string[];
  /** What needs it, for the one line a missing package gets. */
  for: string;
}

export const HOST_PACKAGES: readonly HostPackage[] = [
  { pkg: "skopeo", provides: ["skopeo"], for: "image archives read by an independent tool" },
  { pkg: "docker-registry", provides: ["docker-registry"], for: "the test registry" },
  { pkg: "runc", provides: ["runc"], for: "the real node's containers" },
  {
    pkg: "containernetworking-plugins",
    provides: ["/usr/lib/cni/bridge"],
    for: "the real node's pod network",
  },
  { pkg: "iptables", provides: ["iptables"], for: "the real node's Service rule" },
  { pkg: "iproute2", provides: ["ip"], for: "the real node's network namespace" },
  { pkg: "systemd", provides: ["/usr/lib/systemd/systemd"], for: "a real systemd read over D-Bus" },
  { pkg: "util-linux", provides: ["unshare", "nsenter", "mount", "setpriv"], for: "namespaces and chroots" },
  { pkg: "openssl", provides: ["openssl"], for: "the test PKI" },
  { pkg: "python3", provides: ["python3"], for: "a pseudo-terminal for prompts" },
];

const SBIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const MIN_GO: readonly [number, number] = [1, 26];

function present(exe: string): boolean {
  if (exe.startsWith("/")) return existsSync(exe);
  return Bun.which(exe, { PATH: `${process.env.PATH ?? ""}:${SBIN_PATH}` }) !== null;
}

export function missingPackages(): string[] {
  return HOST_PACKAGES.filter((p) => !p.provides.every(present)).map((p) => p.pkg);
}

/** The Go toolchain's problem, or undefined when `go version` is ≥ MIN_GO. */
export function goProblem(): string | undefined {
  const r = spawnSync("go", ["version"], { encoding: "utf8" });
  if (r.error || r.status !== 0) return "go is not on PATH";
  const m = r.stdout.match(/go(\d+)\.(\d+)/);
  const [major, minor] = [Number(m?.[1] ?? 0), Number(m?.[2] ?? 0)];
  if (major > MIN_GO[0] || (major === MIN_GO[0] && minor >= MIN_GO[1])) return undefined;
  return `go ${major}.${minor} is older than ${MIN_GO.join(".")}`;
}

function canInstall(): boolean {
  return process.getuid?.() === 0 && present("apt-get");
}

function aptInstall(pkgs: string[]): boolean {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const quiet: SpawnSyncOptions = { env, stdio: ["ignore", "ignore", "inherit"] };
  process.stderr.write(`prereqs: installing ${pkgs.join(" ")} from Debian's packages\n`);
  if (spawnSync("apt-get", ["update", "-q"], quiet).status !== 0) return false;
  const args = ["install", "-y", "-q", "--no-install-recommends", ...pkgs];
  return spawnSync("apt-get", args, quiet).status === 0;
}

function main(): number {
  if (process.argv.includes("--list")) {
    process.stdout.write(`${JSON.stringify(HOST_PACKAGES)}\n`);
    return 0;
  }
  const checkOnly = process.argv.includes("--check");
  let missing = missingPackages();
  if (missing.length > 0 && !checkOnly && canInstall() && aptInstall(missing)) missing = missingPackages();
  const go = goProblem();
  const problems: string[] = [];
  if (missing.length > 0) {
    const why = HOST_PACKAGES.filter((p) => missing.includes(p.pkg)).map((p) => `${p.pkg}: ${p.for}`);
    problems.push(
      `missing Debian packages (${why.join("; ")}); install them with: sudo apt-get install -y --no-install-recommends ${missing.join(" ")}`,
    );
  }
  if (go)
    problems.push(
      `${go}: the test control plane and node are built with Go ≥ ${MIN_GO.join(".")}; install it from go.dev/dl and put it on PATH`,
    );
  for (const p of problems) process.stderr.write(`prereqs: ${p}\n`);
  return problems.length > 0 ? 1 : 0;
}

if (import.meta.main) process.exit(main());

/**
 * Builds the real test node's binaries once per machine, keyed by the hash of this module's sources,
 * go.mod, go.sum and the recorded nvidia-smi XML, into ~/.cache/aicr/node/<hash>/ (AICR_CACHE_DIR moves
 * the root), outside the work tree like the control plane (test/control-plane/build.ts):
 *
 *   containerd                containerd 2.x, ctr and the node supervisor in one static binary; ctr and
 *                             aicr-node are links to it
 *   containerd-shim-runc-v2   containerd's runc shim (static; a binary of its own: shim/main.go says why)
 *   pause                     the sandbox image's process (static)
 *   ticker                    the test workload image's process: ticks, an exit status, SIGTERM handling (static)
 *   nvidia-smi                the stand-in that prints test/fixtures/bin/h100/nvidia-smi.xml (static)
 *
 * The kubelet and the device plugin are subcommands of the control-plane binary (same Kubernetes release).
 *
 *   bun test/node/build.ts                  prints the directory (builds first if needed)
 *   import { nodeBinaries } from ...        the same, for test support
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const NODE_MODULE_DIR = import.meta.dir;
const ROOT = join(NODE_MODULE_DIR, "../..");
/** The recorded `nvidia-smi -q -x` of an 8×H100 node the stand-in prints (embedded at build time). */
export const NVIDIA_SMI_XML = join(ROOT, "test/fixtures/bin/h100/nvidia-smi.xml");
/** The containerd release go.mod requires; the CRI reports it as the node's runtime version. */
export const CONTAINERD_VERSION = (readFileSync(join(NODE_MODULE_DIR, "go.mod"), "utf8").match(
  /github\.com\/containerd\/containerd\/v2 v(\d+\.\d+\.\d+)/,
) ?? [])[1] as string;
/** Left out of containerd: snapshotters this node does not use (btrfs needs cgo anyway), and tracing. */
const TAGS = "no_btrfs,no_devmapper,no_zfs,no_tracing";
const PACKAGES = [".", "shim", "pause", "ticker", "nvidia-smi"];

function sourceHash(): string {
  const h = createHash("sha256");
  const files: string[] = [];
  for (const pkg of PACKAGES) {
    const dir = join(NODE_MODULE_DIR, pkg);
    for (const f of readdirSync(dir).sort())
      if (f.endsWith(".go") || (pkg === "." && (f === "go.mod" || f === "go.sum"))) files.push(join(dir, f));
  }
  files.push(NVIDIA_SMI_XML);
  for (const f of files) h.update(f.slice(ROOT.length)).update("\0").update(readFileSync(f)).update("\0");
  return h.digest("hex").slice(0, 16);
}

export function nodeCacheDir(): string {
  return join(process.env.AICR_CACHE_DIR ?? join(homedir(), ".cache/aicr"), "node", sourceHash());
}

export interface NodeBinaries {
  dir: string;
  containerd: string;
  shim: string;
  ctr: string;
  /** The supervisor: `aicr-node up|init|sweep`. */
  aicrNode: string;
  pause: string;
  ticker: string;
  nvidiaSmi: string;
}

const LINKS = ["ctr", "aicr-node"];

function binaries(dir: string): NodeBinaries {
  return {
    dir,
    containerd: join(dir, "containerd"),
    shim: join(dir, "containerd-shim-runc-v2"),
    ctr: join(dir, "ctr"),
    aicrNode: join(dir, "aicr-node"),
    pause: join(dir, "pause"),
    ticker: join(dir, "ticker"),
    nvidiaSmi: join(dir, "nvidia-smi"),
  };
}

let building: Promise<NodeBinaries> | undefined;

/** The built binaries, building them first when this hash has none. */
export function nodeBinaries(): Promise<NodeBinaries> {
  building ??= build();
  return building;
}

async function goBuild(args: string[], env: Record<string, string>): Promise<void> {
  const proc = Bun.spawn(["go", "build", "-trimpath", ...args], {
    cwd: NODE_MODULE_DIR,
    env: {
      ...process.env,
      GOFLAGS: "-mod=mod -buildvcs=false",
      GOTOOLCHAIN: "local",
      CGO_ENABLED: "0",
      ...env,
    },
    stdout: "inherit",
    stderr: "inherit",
  });
  if ((await proc.exited) !== 0)
    throw new Error(`go build ${args.at(-1)} of test/node failed (exit ${proc.exitCode})`);
}

async function build(): Promise<NodeBinaries> {
  const dir = nodeCacheDir();
  const out = binaries(dir);
  if (existsSync(join(dir, ".complete"))) return out;
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const started = performance.now();
  process.stderr.write(
    `building the test node (containerd ${CONTAINERD_VERSION}, pause, nvidia-smi) into ${dir} …\n`,
  );
  try {
    const pkg = "github.com/containerd/containerd/v2";
    const version = `-s -w -X ${pkg}/version.Version=${CONTAINERD_VERSION} -X ${pkg}/version.Revision=aicr-test-node`;
    await goBuild(["-tags", TAGS, "-ldflags", version, "-o", join(tmp, "containerd"), "."], {});
    await goBuild(
      ["-tags", TAGS, "-ldflags", version, "-o", join(tmp, "containerd-shim-runc-v2"), "./shim"],
      {},
    );
    await goBuild(["-ldflags", "-s -w", "-o", join(tmp, "pause"), "./pause"], {});
    await goBuild(["-ldflags", "-s -w", "-o", join(tmp, "ticker"), "./ticker"], {});
    // go:embed reads only files in the package's directory: the overlay lends it the fixture.
    const overlay = join(tmp, "overlay.json");
    writeFileSync(
      overlay,
      JSON.stringify({ Replace: { [join(NODE_MODULE_DIR, "nvidia-smi/nvidia-smi.xml")]: NVIDIA_SMI_XML } }),
    );
    await goBuild(
      ["-overlay", overlay, "-ldflags", "-s -w", "-o", join(tmp, "nvidia-smi"), "./nvidia-smi"],
      {},
    );
    rmSync(overlay);
    for (const l of LINKS) symlinkSync("containerd", join(tmp, l));
    writeFileSync(join(tmp, ".complete"), "");
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  try {
    renameSync(tmp, dir);
  } catch {
    // Another process finished the same build first: use its copy.
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(join(dir, ".complete"))) throw new Error(`test node build: ${dir} is incomplete`);
  }
  process.stderr.write(`built in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  // Builds of other source hashes are stale: keep only this one (and builds in progress).
  const parent = join(dir, "..");
  for (const other of readdirSync(parent))
    if (join(parent, other) !== dir && !other.includes(".tmp-"))
      rmSync(join(parent, other), { recursive: true, force: true });
  return out;
}

if (import.meta.main) {
  const b = await nodeBinaries();
  process.stdout.write(`${b.dir}\n`);
}

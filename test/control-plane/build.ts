/**
 * Builds the test control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, the
 * kubelet and a fake GPU device plugin of the real test node, and kubectl in one Go binary) once per machine, keyed by the hash of this module's sources, go.mod and
 * go.sum. The binary lives in ~/.cache/aicr/control-plane/<hash>/ (AICR_CACHE_DIR overrides the root),
 * outside the work tree, so a fresh clone or `git clean` reuses it.
 *
 *   bun test/control-plane/build.ts          prints the binary's path (builds first if needed), then
 *                                            the real test node's binary directory (test/node/build.ts)
 *   import { controlPlaneBinary } from ...   the same, for test support
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const MODULE_DIR = import.meta.dir;
/** The Kubernetes release the module requires (go.mod); kubectl and the servers report it. */
export const KUBERNETES_VERSION = (readFileSync(join(MODULE_DIR, "go.mod"), "utf8").match(
  /k8s\.io\/kubernetes (v\d+\.\d+\.\d+)/,
) ?? [])[1] as string;

/** The binary's sources: go.mod, go.sum and every non-test `.go` file, its packages' (up/) included. */
function sourceHash(): string {
  const h = createHash("sha256");
  const files = (readdirSync(MODULE_DIR, { recursive: true }) as string[])
    .filter((f) => (f.endsWith(".go") && !f.endsWith("_test.go")) || f === "go.mod" || f === "go.sum")
    .sort();
  for (const f of files)
    h.update(f)
      .update("\0")
      .update(readFileSync(join(MODULE_DIR, f)))
      .update("\0");
  return h.digest("hex").slice(0, 16);
}

export function cacheDir(): string {
  return join(process.env.AICR_CACHE_DIR ?? join(homedir(), ".cache/aicr"), "control-plane", sourceHash());
}

export interface ControlPlaneBinaries {
  /** The multi-call binary: `control-plane up|etcd|kube-apiserver|…`. */
  controlPlane: string;
  /** A link to it named kubectl: the same release's kubectl. */
  kubectl: string;
  /** The directory holding both (prepend it to PATH to make `kubectl` this one). */
  dir: string;
}

let building: Promise<ControlPlaneBinaries> | undefined;

/** The built binaries, building them first when this hash has none. */
export function controlPlaneBinary(): Promise<ControlPlaneBinaries> {
  building ??= build();
  return building;
}

async function build(): Promise<ControlPlaneBinaries> {
  const dir = cacheDir();
  const out: ControlPlaneBinaries = {
    controlPlane: join(dir, "control-plane"),
    kubectl: join(dir, "kubectl"),
    dir,
  };
  if (existsSync(out.controlPlane) && existsSync(out.kubectl)) return out;
  mkdirSync(dir, { recursive: true });
  const [major, minor] = KUBERNETES_VERSION.slice(1).split(".");
  const ldflags = [
    "-s",
    "-w",
    `-X k8s.io/component-base/version.gitVersion=${KUBERNETES_VERSION}`,
    `-X k8s.io/component-base/version.gitMajor=${major}`,
    `-X k8s.io/component-base/version.gitMinor=${minor}`,
    "-X k8s.io/component-base/version.gitTreeState=clean",
    `-X k8s.io/client-go/pkg/version.gitVersion=${KUBERNETES_VERSION}`,
  ].join(" ");
  const tmp = join(dir, `control-plane.tmp-${process.pid}`);
  const started = performance.now();
  process.stderr.write(`building the test control plane (Kubernetes ${KUBERNETES_VERSION}) into ${dir} …\n`);
  const proc = Bun.spawn(["go", "build", "-trimpath", "-ldflags", ldflags, "-o", tmp, "."], {
    cwd: MODULE_DIR,
    env: { ...process.env, GOFLAGS: "-mod=mod -buildvcs=false", GOTOOLCHAIN: "local" },
    stdout: "inherit",
    stderr: "inherit",
  });
  if ((await proc.exited) !== 0) {
    rmSync(tmp, { force: true });
    throw new Error(`go build of test/control-plane failed (exit ${proc.exitCode})`);
  }
  renameSync(tmp, out.controlPlane);
  rmSync(out.kubectl, { force: true });
  symlinkSync("control-plane", out.kubectl);
  process.stderr.write(`built in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  // Binaries of other source hashes are stale (about 230 MB each): keep only this one.
  const parent = join(dir, "..");
  for (const other of readdirSync(parent))
    if (join(parent, other) !== dir) rmSync(join(parent, other), { recursive: true, force: true });
  return out;
}

if (import.meta.main) {
  const b = await controlPlaneBinary();
  process.stdout.write(`${b.controlPlane}\n`);
  // `npm run control-plane` (part of npm test) also builds the real test node's binaries
  // (containerd, its shim, pause, the nvidia-smi stand-in: test/node/build.ts); their directory second.
  const { nodeBinaries } = await import("../node/build.ts");
  process.stdout.write(`${(await nodeBinaries()).dir}\n`);
}

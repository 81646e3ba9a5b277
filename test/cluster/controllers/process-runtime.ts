/**
 * A runtime that runs real processes: for configured images, the pod's command/args are executed with
 * command[0] replaced by a local executable, the pod's env, and KUBECONFIG for the pod's ServiceAccount —
 * or, when the kubelet gives a `serviceAccountDir`, that directory bind-mounted at the in-cluster path.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Bind,
  chrootArgv,
  containerUser,
  deviceDirLines,
  imageArgv,
  inPrivateMounts,
  volumeBinds,
} from "../images/chroot.ts";
import type { ImagePuller, PulledImage } from "../images/pull.ts";
import { expandVars } from "./env.ts";
import type { ContainerRuntime, RunContext, RunFunction, RunResult } from "./runtime.ts";

export interface ProcessRuntimeOptions {
  /** Image → executable. Images without one go to `fallback`. */
  images: Record<string, string> | ((image: string) => string | undefined);
  /**
   * Kubeconfig file content for a ServiceAccount; written per pod and exported as KUBECONFIG. Not used
   * when the kubelet passes a `serviceAccountDir` (the process then uses in-cluster credentials).
   */
  kubeconfigForServiceAccount?: (namespace: string, name: string) => Promise<string>;
  /** Environment every process starts from (default: only PATH), before the pod's env. */
  baseEnv?: Record<string, string>;
  /** Where per-pod kubeconfigs go (default: a fresh temp directory). */
  workDir?: string;
  /** Between SIGTERM on pod deletion and SIGKILL. */
  killGraceMs?: number;
  /** Runs containers whose image has no executable (default: exit 0 at once). */
  fallback?: RunFunction;
  /**
   * Pulls images that `images` does not map (e.g. from a test registry: test/cluster/images); those
   * containers run chrooted into the image's own files. Returns undefined for images it does not serve.
   */
  pull?: ImagePuller;
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** Where a container finds its ServiceAccount credentials (the product's in-cluster transport reads it). */
export const SERVICE_ACCOUNT_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * argv that runs `argv` in a private mount namespace where `dir` is bind-mounted read-only at
 * SERVICE_ACCOUNT_MOUNT, as a container sees its projected ServiceAccount volume (needs root). The
 * shell `exec`s the program, so it keeps the spawned PID: signals reach it and its exit status is the
 * container's (SIGTERM still gives 128+15).
 */
export function withServiceAccountMount(dir: string, argv: string[]): string[] {
  return inContainerMounts({ serviceAccountDir: dir }, argv);
}

/**
 * argv that runs `argv` as it is, or — with a ServiceAccount directory (withServiceAccountMount) or
 * device nodes (a /dev of its own holding them, images/chroot.ts deviceDirLines) — in a private mount
 * namespace that has them (needs root).
 */
export function inContainerMounts(
  o: { serviceAccountDir?: string | undefined; devices?: string[] | undefined },
  argv: string[],
): string[] {
  if (!o.devices && !o.serviceAccountDir) return argv;
  const lines = ["set -e"];
  if (o.devices) lines.push(...deviceDirLines("/dev", o.devices));
  if (o.serviceAccountDir) {
    const m = SERVICE_ACCOUNT_MOUNT;
    lines.push(`mount --bind "$0" ${m}`, `mount -o remount,ro,bind ${m}`);
  }
  lines.push('exec "$@"');
  return inPrivateMounts(lines.join("\n"), [o.serviceAccountDir ?? "container", ...argv]);
}

/** Copies a stream until it ends or `stop` resolves (a grandchild may keep the pipe open forever). */
async function pump(
  stream: ReadableStream<Uint8Array>,
  write: (c: Uint8Array) => void,
  stop: Promise<void>,
): Promise<void> {
  const reader = stream.getReader();
  void stop.then(() => reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (done) return;
    if (value) write(value);
  }
}

// Simplification: no cgroup, so the container's end is its main process's exit; output still
// buffered in the pipes is read until EOF, or for up to 2 s after that if a grandchild holds the pipe.
const DRAIN_AFTER_EXIT_MS = 2000;

/** argv as the kubelet builds it: command (or the image entrypoint) then args, with $(VAR) expanded. */
export function processArgv(
  executable: string,
  container: RunContext["container"],
  env: Record<string, string>,
): string[] {
  const command: string[] = (container.command ?? []).map((s: string) => expandVars(s, env));
  const args: string[] = (container.args ?? []).map((s: string) => expandVars(s, env));
  return command.length > 0 ? [executable, ...command.slice(1), ...args] : [executable, ...args];
}

// Simplification: terminationMessagePolicy File is not read from the process (only FallbackToLogsOnError
// works), and the kill grace is killGraceMs rather than terminationGracePeriodSeconds.
export function processRuntime(opts: ProcessRuntimeOptions): ContainerRuntime {
  const lookup =
    typeof opts.images === "function"
      ? opts.images
      : (i: string) => (opts.images as Record<string, string>)[i];
  const fallback: RunFunction = opts.fallback ?? (async () => ({ exitCode: 0 }));
  let workDir: Promise<string> | undefined;
  const dir = () => {
    workDir ??= opts.workDir
      ? mkdir(opts.workDir, { recursive: true }).then(() => opts.workDir!)
      : mkdtemp(join(tmpdir(), "aicr-kubelet-"));
    return workDir;
  };

  // imagePullPolicy IfNotPresent, whatever the pod says: a reference is pulled once per runtime.
  const images = new Map<string, Promise<PulledImage>>();
  const pulled = (image: string): Promise<PulledImage> | undefined => {
    const known = images.get(image);
    if (known) return known;
    const pulling = opts.pull?.(image);
    if (!pulling) return undefined;
    images.set(image, pulling);
    pulling.catch(() => images.delete(image)); // a failed pull is tried again next time
    return pulling;
  };
  const pull = async (image: string): Promise<boolean> => {
    if (lookup(image)) return false;
    const pulling = pulled(image);
    if (!pulling) return false;
    await pulling;
    return true;
  };

  const run = async (ctx: RunContext): Promise<RunResult> => {
    const exe = lookup(ctx.container.image);
    let image: PulledImage | undefined;
    if (!exe) {
      const pulling = pulled(ctx.container.image);
      if (!pulling) return fallback(ctx);
      image = await pulling; // the kubelet's pull phase already waited for it (and failed the pod if it threw)
    }
    const pod = ctx.pod;
    const fromImage = image ? Object.fromEntries(image.env.map((e) => e.split(/=(.*)/s).slice(0, 2))) : {};
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      ...opts.baseEnv,
      ...fromImage,
      HOSTNAME: pod.metadata.name!,
      // runc sets HOME from the image's /etc/passwd, "/" for a user it lacks (aicr's image has none).
      ...(image ? { HOME: "/" } : {}),
      ...ctx.env,
    };
    let podDir: string | undefined;
    if (ctx.serviceAccountDir) {
      // In-cluster credentials instead of a kubeconfig, as in a real pod; the mount point must exist.
      await mkdir(SERVICE_ACCOUNT_MOUNT, { recursive: true });
    } else if (opts.kubeconfigForServiceAccount) {
      const sa = pod.spec?.serviceAccountName ?? "default";
      const content = await opts.kubeconfigForServiceAccount(pod.metadata.namespace!, sa);
      podDir = join(await dir(), `${pod.metadata.uid}-${ctx.container.name}`);
      await mkdir(podDir, { recursive: true });
      await writeFile(join(podDir, "kubeconfig"), content, { mode: 0o600 });
      env.KUBECONFIG = join(podDir, "kubeconfig");
    }
    let rootCopy: string | undefined;
    try {
      let spawnArgv: string[];
      if (image) {
        rootCopy = join(await dir(), `${pod.metadata.uid}-${ctx.container.name}-root`);
        await rm(rootCopy, { recursive: true, force: true });
        const copied = Bun.spawnSync(["cp", "-al", image.rootfs, rootCopy]);
        if (!copied.success) throw new Error(`cp -al ${image.rootfs}: ${copied.stderr.toString()}`);
        const binds: Bind[] = await volumeBinds(pod, ctx.container, rootCopy);
        if (ctx.serviceAccountDir)
          binds.push({ source: ctx.serviceAccountDir, target: SERVICE_ACCOUNT_MOUNT, readOnly: true });
        // What this test host stands in for on a node: the kubeconfig and a fixture host root.
        for (const path of [podDir, opts.baseEnv?.AICR_HOST_ROOT])
          if (path) binds.push({ source: path, target: path });
        const user = containerUser(pod, ctx.container, image);
        spawnArgv = chrootArgv({
          root: rootCopy,
          binds,
          argv: imageArgv(image, ctx.container, env),
          ...(user ? { user } : {}),
          ...(ctx.devices ? { devices: ctx.devices } : {}),
        });
      } else {
        const argv = processArgv(exe!, ctx.container, env);
        spawnArgv = inContainerMounts(
          { serviceAccountDir: ctx.serviceAccountDir, devices: ctx.devices },
          argv,
        );
      }
      const proc = Bun.spawn(spawnArgv, {
        env,
        cwd: image ? "/" : (ctx.container.workingDir ?? podDir ?? process.cwd()),
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      let killTimer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = () => {
        proc.kill("SIGTERM");
        killTimer = setTimeout(() => proc.kill("SIGKILL"), opts.killGraceMs ?? 2000);
      };
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      if (ctx.signal.aborted) onAbort(); // aborted while the process was being prepared
      const drained = proc.exited.then(() => new Promise<void>((r) => setTimeout(r, DRAIN_AFTER_EXIT_MS)));
      await Promise.all([
        pump(proc.stdout, ctx.stdout, drained),
        pump(proc.stderr, ctx.stderr, drained),
        proc.exited,
      ]);
      ctx.signal.removeEventListener("abort", onAbort);
      if (killTimer) clearTimeout(killTimer);
      const signal = proc.signalCode ? (SIGNALS[proc.signalCode] ?? 9) : undefined;
      return { exitCode: signal !== undefined ? 128 + signal : (proc.exitCode ?? 0) };
    } finally {
      if (podDir) await rm(podDir, { recursive: true, force: true });
      if (rootCopy) await rm(rootCopy, { recursive: true, force: true });
    }
  };
  /** Removes the temp directory it made (a given workDir is the caller's); the kubelets call it on stop. */
  const close = async (): Promise<void> => {
    const made = !opts.workDir && workDir ? await workDir.catch(() => undefined) : undefined;
    workDir = undefined;
    if (made) await rm(made, { recursive: true, force: true });
  };
  return opts.pull ? { run, pull, close } : { run, close };
}

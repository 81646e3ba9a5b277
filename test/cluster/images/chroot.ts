/**
 * How the test kubelets run a container from a pulled image: a per-container copy of the image's root
 * filesystem (hard links, so nothing of the shared unpack is touched), in a private mount namespace
 * with /proc mounted (as every container runtime does; the Bun runtime aborts without it), the
 * pod's volumes bind-mounted, then `chroot` to it as the container's user. Needs root.
 *
 * Simplifications (fidelity): no pid, network, IPC or user namespace (the agent's pod asks for
 * hostPID, hostNetwork and hostIPC anyway), no cgroup; a hostPath that does not exist on this host
 * is an empty directory rather than a failed mount.
 */
import { existsSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { KObject } from "../store.ts";
import type { PulledImage } from "./pull.ts";

export interface Bind {
  source: string;
  /** Path inside the container. */
  target: string;
  readOnly?: boolean;
}

const q = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/** The argv of `command`/`args` (or the image's entrypoint/cmd), with command[0] found on the image's PATH. */
export function imageArgv(
  image: PulledImage,
  container: KObject["spec"],
  env: Record<string, string>,
): string[] {
  const command: string[] = container.command ?? image.entrypoint;
  const args: string[] = container.args ?? (container.command ? [] : image.cmd);
  const argv = [...command, ...args];
  const first = argv[0];
  if (!first) throw new Error(`image ${image.reference} has no entrypoint and the container no command`);
  if (!first.includes("/")) {
    const dirs = (env.PATH ?? "/usr/local/bin:/usr/bin:/bin").split(":");
    const hit = dirs.map((d) => join(d, first)).find((p) => existsSync(join(image.rootfs, p)));
    if (!hit)
      throw new Error(`executable file ${JSON.stringify(first)} not found in $PATH of ${image.reference}`);
    argv[0] = hit;
  }
  return argv;
}

/** The pod's hostPath and emptyDir volumes as binds (emptyDirs are made under `podDir`). */
export async function volumeBinds(pod: KObject, container: KObject["spec"], podDir: string): Promise<Bind[]> {
  const volumes = new Map<string, KObject>((pod.spec?.volumes ?? []).map((v: KObject) => [v.name, v]));
  const binds: Bind[] = [];
  for (const m of container.volumeMounts ?? []) {
    const v = volumes.get(m.name);
    if (v?.hostPath && existsSync(v.hostPath.path)) {
      binds.push({ source: v.hostPath.path, target: m.mountPath, readOnly: Boolean(m.readOnly) });
    } else if (v?.hostPath || v?.emptyDir) {
      const dir = join(podDir, "volumes", m.name);
      await mkdir(dir, { recursive: true, mode: 0o1777 });
      binds.push({ source: dir, target: m.mountPath, readOnly: Boolean(m.readOnly) });
    }
  }
  return binds;
}

/** The character devices every container's /dev holds (runc's default devices, /dev/tty aside). */
const BASE_DEVICES = ["null", "zero", "full", "random", "urandom", "tty"];

/**
 * Shell lines (for a script run in a private mount namespace, before anything is mounted below `dev`)
 * that give a container a /dev of its own at `dev`: a tmpfs holding the host's null, zero, full, random,
 * urandom and tty (each made anew with the host node's major and minor numbers), the fd/stdin/stdout/
 * stderr links, an empty shm — and `devices` (absolute /dev paths such as /dev/nvidia0): character
 * devices with /dev/null's numbers, which open, read and write as /dev/null does.
 *
 * Simplification (fidelity): a DRA driver's CDI edits name the real GPU's device nodes; here each is
 * a /dev/null clone, so what a test proves is which files a container sees, not that a GPU answers.
 */
export function deviceDirLines(dev: string, devices: string[]): string[] {
  const lines = [
    // "major minor" in decimal of a host device node (stat prints them in hex).
    `devnum() { stat -c '%t %T' "$1" | { read -r a b; echo "$((0x$a)) $((0x$b))"; }; }`,
    ...BASE_DEVICES.map((n) => `[ -c /dev/${n} ] && dev_${n}="$(devnum /dev/${n})" || dev_${n}=`),
    `mkdir -p ${q(dev)}`,
    `mount -t tmpfs -o mode=755,nosuid,size=64k tmpfs ${q(dev)}`,
  ];
  for (const n of BASE_DEVICES)
    lines.push(`[ -z "$dev_${n}" ] || mknod -m 666 ${q(join(dev, n))} c $dev_${n}`);
  lines.push(
    `ln -s /proc/self/fd ${q(join(dev, "fd"))}`,
    ...["stdin", "stdout", "stderr"].map((s, i) => `ln -s /proc/self/fd/${i} ${q(join(dev, s))}`),
    `mkdir -m 1777 ${q(join(dev, "shm"))}`,
  );
  for (const d of devices) {
    if (!/^\/dev\/(?!\.+$)[\w.-]+$/.test(d)) throw new Error(`not a device node path under /dev: ${d}`);
    lines.push(`mknod -m 666 ${q(join(dev, d.slice("/dev/".length)))} c $dev_null`);
  }
  return lines;
}

/**
 * argv that runs `argv` chrooted into `root` (the container's own copy), with /proc and the binds; with
 * `devices`, a /dev of its own holding them (deviceDirLines).
 */
export function chrootArgv(o: {
  root: string;
  binds: Bind[];
  user?: string;
  argv: string[];
  devices?: string[];
}): string[] {
  const lines = [
    "set -e",
    `mkdir -p ${q(join(o.root, "proc"))}`,
    `mount -t proc proc ${q(join(o.root, "proc"))}`,
    ...(o.devices ? deviceDirLines(join(o.root, "dev"), o.devices) : []),
  ];
  for (const b of o.binds) {
    const target = join(o.root, b.target);
    const isFile = existsSync(b.source) && statSync(b.source).isFile();
    lines.push(
      isFile ? `mkdir -p "$(dirname ${q(target)})" && touch ${q(target)}` : `mkdir -p ${q(target)}`,
      `mount --bind ${q(b.source)} ${q(target)}`,
    );
    if (b.readOnly) lines.push(`mount -o remount,ro,bind ${q(target)}`);
  }
  const userspec = o.user ? ` --userspec=${q(o.user)}` : "";
  // The script runs with the container's PATH; chroot lives in the host's /usr/sbin.
  const chroot = Bun.which("chroot", { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" }) ?? "/usr/sbin/chroot";
  lines.push(`exec ${q(chroot)}${userspec} ${q(o.root)} "$@"`);
  return inPrivateMounts(lines.join("\n"), ["container", ...o.argv]);
}

/**
 * argv that runs a shell script in a private mount namespace (needs root): what it mounts is seen by
 * the program it `exec`s and by nothing else. `args` are the script's $0, $1, …
 */
export function inPrivateMounts(script: string, args: string[]): string[] {
  return [
    Bun.which("unshare") ?? "unshare",
    "--mount",
    "--propagation",
    "private",
    "/bin/sh",
    "-c",
    script,
    ...args,
  ];
}

/** The container's user: runAsUser/runAsGroup from its securityContext, then the pod's, then the image's. */
export function containerUser(
  pod: KObject,
  container: KObject["spec"],
  image: PulledImage,
): string | undefined {
  const c = container.securityContext ?? {};
  const p = pod.spec?.securityContext ?? {};
  const uid = c.runAsUser ?? p.runAsUser;
  const gid = c.runAsGroup ?? p.runAsGroup;
  if (uid !== undefined) return `${uid}:${gid ?? uid}`;
  return image.user;
}

/**
 * What real test nodes left on this machine: the proof that stop(), a killed test process and a
 * killed supervisor leave nothing behind. Everything a node makes is named after it or lives in its
 * directory, so the search is by name:
 *
 *   processes   containerd, shims, kubelet, device plugin, docker-registry, runc, containers: any
 *               process whose executable is one of the node's binaries, whose command line names a
 *               node directory (/tmp/aicr-node-*), or whose cgroup lies under a node's cgroup root
 *   namespaces  network namespaces aicr-node-<x>; host veth ends aicrn<x>
 *   mounts      any mount of this (the host's) mount namespace naming a node directory or netns
 *   cgroups     /aicr-node-<x> in every hierarchy (each v1 controller, name=systemd, unified)
 *   firewall    any rule of the host's iptables naming aicr (the node's own rule lives in its netns)
 *   files       node directories (/tmp/aicr-node-*), claims (/run/aicr-nodes), and the default paths
 *               of the node's components on the host (/var/lib/kubelet, /etc/cni, /opt/containerd, …)
 *
 *   bun test/cluster/real/node/leftovers.ts        prints them; exit 1 when there are any
 *
 * Another test process's live node is a leftover too for this search: run it when no other is running,
 * or pass `only` (one node's index and directory) as the tests do.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Paths a component would write on the host if the node's private mounts did not cover them. */
export const DEFAULT_PATHS = [
  "/var/lib/kubelet",
  "/var/lib/containerd",
  "/var/lib/cni",
  "/var/log/pods",
  "/var/log/containers",
  "/etc/cni",
  "/opt/containerd",
  "/opt/cni",
  "/run/containerd",
  "/run/nri",
  "/usr/libexec/kubernetes",
  "/run/aicr-nodes",
];

/** Host sysctls the kubelet would change: they must stay as they were. */
export const WATCHED_SYSCTLS = [
  "kernel/panic",
  "kernel/panic_on_oops",
  "vm/overcommit_memory",
  "vm/panic_on_oom",
  "kernel/keys/root_maxkeys",
  "kernel/keys/root_maxbytes",
  "net/ipv4/ip_forward",
];

export function sysctls(): Record<string, string> {
  return Object.fromEntries(WATCHED_SYSCTLS.map((k) => [k, readFileSync(`/proc/sys/${k}`, "utf8").trim()]));
}

export interface LeftoverFilter {
  /** One node: its network index and directory. Default: every node's. */
  only?: { index: number; dir: string };
  /** Executables that count as node processes (the node's binaries; default: any under a node cache). */
  binaries?: string[];
}

const safe = <T>(fn: () => T, fallback: T): T => {
  try {
    return fn();
  } catch {
    return fallback;
  }
};

function cgroupMounts(): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((l) => / - cgroup2? /.test(l))
    .map((l) => l.split(" ")[4]!);
}

export function nodeLeftovers(filter: LeftoverFilter = {}): string[] {
  const out: string[] = [];
  const { only } = filter;
  const netnsName = (n: string) => (only ? n === `aicr-node-${only.index}` : /^aicr-node-\d+$/.test(n));
  const dirMatch = (s: string) => (only ? s.includes(only.dir) : /\/aicr-node-[A-Za-z0-9]{6}/.test(s));
  const vethName = (n: string) => (only ? n === `aicrn${only.index}` : /^aicrn\d+$/.test(n));
  const cgroupName = (n: string) => (only ? n === `aicr-node-${only.index}` : /^aicr-node-\d+$/.test(n));

  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    if (Number(pid) === process.pid) continue;
    const exe = safe(() => readlinkSync(`/proc/${pid}/exe`), "");
    const cmd = safe(() => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim(), "");
    // A container's process: its cgroup lies under a node's cgroup root.
    const cgroups = safe(() => readFileSync(`/proc/${pid}/cgroup`, "utf8"), "");
    // One node's processes are told apart by their command lines (each names the node's directory)
    // and cgroups; any node's also by their executables.
    const ours =
      (filter.binaries ?? []).some((b) => exe === b) ||
      (!only && !filter.binaries && /\/\.cache\/aicr\/node\//.test(exe)) ||
      dirMatch(cmd) ||
      cgroups.split("\n").some((l) => cgroupName(l.split(":")[2]?.split("/")[1] ?? ""));
    if (ours) out.push(`process ${pid}: ${cmd || exe}`);
  }
  for (const n of safe(() => readdirSync("/run/netns"), [] as string[]))
    if (netnsName(n)) out.push(`network namespace ${n}`);
  for (const n of safe(() => readdirSync("/sys/class/net"), [] as string[]))
    if (vethName(n)) out.push(`network device ${n}`);
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n"))
    if (dirMatch(line) || [...line.matchAll(/\/run\/netns\/(\S+)/g)].some((m) => netnsName(m[1]!)))
      out.push(`mount: ${line}`);
  for (const m of cgroupMounts())
    for (const n of safe(() => readdirSync(m), [] as string[]))
      if (cgroupName(n)) out.push(`cgroup ${join(m, n)}`);
  const rules = Bun.spawnSync(["iptables-save"], { stdout: "pipe", stderr: "pipe" });
  for (const r of rules.stdout.toString().split("\n")) if (/aicr/i.test(r)) out.push(`iptables rule: ${r}`);
  if (only) {
    if (existsSync(only.dir)) out.push(`directory ${only.dir}`);
  } else {
    for (const n of safe(() => readdirSync(tmpdir()), [] as string[]))
      if (/^aicr-node-/.test(n)) out.push(`directory ${join(tmpdir(), n)}`);
  }
  if (only) {
    if (existsSync(`/run/aicr-nodes/${only.index}`)) out.push(`claim /run/aicr-nodes/${only.index}`);
  } else for (const p of DEFAULT_PATHS) if (existsSync(p)) out.push(`path ${p}`);
  return out;
}

if (import.meta.main) {
  const left = nodeLeftovers();
  if (left.length === 0) {
    console.log("no real-node leftovers");
  } else {
    console.log(left.join("\n"));
    console.log(
      `${left.length} leftover(s); \`aicr-node sweep\` (test/node) cleans those of dead supervisors`,
    );
    process.exit(1);
  }
}

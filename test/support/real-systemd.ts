/**
 * A real systemd (the host's /usr/lib/systemd/systemd, Debian's 252 here) as PID 1 of its own PID,
 * mount, cgroup, UTS, IPC and network namespaces, for the tests of the SystemD collector and for a
 * test node's agent pod (bind `<runDir>/systemd` onto the node's /run/systemd).
 *
 * What it takes to run here, found by experiment (systemd is not PID 1 on this machine):
 * - `unshare --cgroup --pid --fork --kill-child --mount --mount-proc --uts --ipc --net`, started from
 *   a fresh cgroup v2 directory of ours (`<cgroup2 mount>/aicr-systemd-<random>`), so the cgroup
 *   namespace is rooted there; inside, cgroup2 is mounted on /sys/fs/cgroup: systemd sees a full
 *   unified hierarchy that is just that directory, creates init.scope and system.slice beneath it and
 *   nothing anywhere else (it never touches the host's v1 hierarchies, name=systemd included).
 * - /run is a bind of `<tmp>/ns-run`; /tmp a private tmpfs; /sys and /proc/sys read-only binds, so
 *   the manager's boot-time writes (fs.file-max, …) fail instead of changing the host;
 *   CAP_SYS_MODULE and CAP_SYS_TIME are out of its bounding set (it probes for autofs4 at start).
 * - `container=aicr-test` in its environment (it then skips what only a booting machine does),
 *   `SYSTEMD_UNIT_PATH=/run/aicr-units` (our units, and only ours: none of the machine's units is
 *   loaded, so none is started), generator paths pointing at nothing, `--unit=aicr-test.target`.
 *   Our units say DefaultDependencies=no (there is no sysinit.target to wait for).
 * - Its log: `--log-target=kmsg` with a FIFO bound over /dev/kmsg, read into `<tmp>/console.log`
 *   (a console log target wants a TTY; kmsg is a plain write). It is quoted when it fails to start.
 *
 * The private socket, as the host sees it: systemd refuses a private connection whose peer PID it
 * cannot see ("Incoming private connection from unprivileged client, refusing: No data available":
 * SO_PEERCRED gives PID 0 for a peer outside its PID namespace), and every client here — bun test, the
 * binary, a test node's pods — is outside it. So systemd-socket-proxyd, a unit of this same manager
 * (aicr-private.socket/.service), listens on `<runDir>/systemd/private` (runDir = `<tmp>/run`, bound
 * at /run/aicr-host inside) and relays each connection, byte for byte, to /run/systemd/private. A
 * node's real systemd sees the agent directly (its pod shares the host's PID namespace); the D-Bus
 * conversation is the same.
 *
 * Units: containerd.service and kubelet.service run `/bin/sleep infinity` (Type=simple; active,
 * running); docker.service runs `/bin/false` (failed, Result exit-code). kubelet.service carries a
 * SetCredential whose value must never reach a snapshot. Ready when the relay answers and each unit
 * is in its state (asked through aicr's own D-Bus client), 0.1–0.3 s here.
 *
 * Cleanup: a supervising shell holds the namespace. When its stdin closes — stop(), or the test
 * process dying, since bun test runs no exit hooks — it kills everything in the cgroup
 * (cgroup.kill), waits until the cgroup is empty, removes its directories and the temp dir. The
 * namespace's mounts die with its last process; the host's /run is never touched. stop() resolves
 * once that is done. Safe to start once per test file (every instance has its own directories).
 */

import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { DbusConnection } from "../../src/collect/_dbus-client.ts";
import type { DbusVariant } from "../../src/collect/_dbus-signature.ts";
import { until } from "./until.ts";

export interface RealSystemd {
  /** A host directory whose systemd/private is the manager's private socket. */
  runDir: string;
  privateSocket: string;
  stop(): Promise<void>;
}

export const SYSTEMD_BINARY = "/usr/lib/systemd/systemd";
const START_MS = 30_000;
const STOP_MS = 20_000;

/** Why a real systemd cannot be started on this machine, or undefined when it can. */
export function realSystemdMissing(): string | undefined {
  if (process.getuid?.() !== 0) return "not root (a PID namespace with systemd as its PID 1 needs root)";
  if (!existsSync(SYSTEMD_BINARY) || !existsSync(PROXYD))
    return `no ${SYSTEMD_BINARY} or ${PROXYD} (apt-get install systemd)`;
  if (!Bun.which("unshare") || !Bun.which("setpriv"))
    return "no unshare or setpriv (apt-get install util-linux)";
  if (!cgroup2Mount()) return "no cgroup2 mount";
  return undefined;
}

/** Where cgroup2 is mounted (/sys/fs/cgroup/unified on a hybrid host, /sys/fs/cgroup on a unified one). */
function cgroup2Mount(): string | undefined {
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [mount, fs] = [line.split(" ")[4], line.split(" - ")[1]?.split(" ")[0]];
    if (fs === "cgroup2" && mount) return mount;
  }
  return undefined;
}

/** Our units and the state each must reach before the manager is handed out. */
const EXPECTED: Readonly<Record<string, string>> = {
  "containerd.service": "active",
  "kubelet.service": "active",
  "docker.service": "failed",
  "aicr-private.socket": "active",
};

const PROXYD = "/usr/lib/systemd/systemd-socket-proxyd";

const unit = (description: string, extra: string, section: string, body: string): string =>
  `[Unit]\nDescription=${description}\nDefaultDependencies=no\n${extra}\n[${section}]\n${body}\n`;

const UNITS: Readonly<Record<string, string>> = {
  "aicr-test.target": `[Unit]\nDescription=aicr test units\nDefaultDependencies=no\nWants=${Object.keys(EXPECTED).join(" ")}\n`,
  "containerd.service": unit(
    "containerd (aicr test unit)",
    "",
    "Service",
    "Type=simple\nExecStart=/bin/sleep infinity\nDelegate=yes\nLimitNOFILE=infinity\nTasksMax=infinity",
  ),
  "kubelet.service": unit(
    "kubelet (aicr test unit)",
    "",
    "Service",
    'Type=simple\nExecStart=/bin/sleep infinity\nEnvironment="KUBELET_ARGS=--v=2 --node-ip=10.0.0.7" HOME=/root\nSetCredential=aicr-test-token:do-not-leak\nRestart=always',
  ),
  "docker.service": unit("docker (aicr test unit)", "", "Service", "Type=simple\nExecStart=/bin/false"),
  // systemd's private socket as the host sees it (see the header: the PID namespace is in the way).
  "aicr-private.socket": unit(
    "systemd's private socket, for the host",
    "",
    "Socket",
    "ListenStream=/run/aicr-host/systemd/private\nSocketMode=0600",
  ),
  "aicr-private.service": unit(
    "relay to systemd's private socket",
    "Requires=aicr-private.socket\nAfter=aicr-private.socket",
    "Service",
    `ExecStart=${PROXYD} /run/systemd/private`,
  ),
};

// Runs inside the namespaces; $1 is the temp dir. Mounts in order: /tmp last, it hides the temp dir.
const INNER = [
  "set -e",
  'd="$1"',
  'mount --bind "$d/ns-run" /run',
  'mount --bind "$d/run" /run/aicr-host',
  'mount --bind "$d/kmsg" /dev/kmsg',
  "mount -o remount,bind,ro /sys",
  "mount -t cgroup2 cgroup2 /sys/fs/cgroup",
  "mount --bind /proc/sys /proc/sys",
  "mount -o remount,bind,ro /proc/sys",
  "mount -t tmpfs -o mode=1777 tmpfs /tmp",
  "export container=aicr-test SYSTEMD_UNIT_PATH=/run/aicr-units",
  "export SYSTEMD_GENERATOR_PATH=/run/aicr-units/none SYSTEMD_ENVIRONMENT_GENERATOR_PATH=/run/aicr-units/none",
  `exec setpriv --bounding-set=-sys_module,-sys_time -- ${SYSTEMD_BINARY} --system --unit=aicr-test.target --log-target=kmsg --log-level=info --show-status=no`,
].join("\n");

// $1 temp dir, $2 our cgroup, $3 the inner script. Holds the namespace until stdin closes.
const SUPERVISE = [
  'dir="$1" cg="$2"',
  "stop() {",
  '  [ -f "$cg/cgroup.kill" ] && echo 1 > "$cg/cgroup.kill"',
  // Killed processes leave asynchronously; the cgroup's directories go once it is empty.
  "  i=0",
  `  while grep -q '^populated 1' "$cg/cgroup.events" 2>/dev/null && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done`,
  '  find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null',
  '  kill "$reader" 2>/dev/null',
  '  rm -rf "$dir"',
  '  [ ! -e "$cg" ] || echo "cgroup $cg left behind" >&2',
  "}",
  'mkdir "$cg" || exit 1',
  'mkfifo "$dir/kmsg" || exit 1',
  // Read-write: the FIFO never reports end-of-file, and systemd's open never blocks.
  'cat <> "$dir/kmsg" > "$dir/console.log" &',
  "reader=$!",
  `{ sh -c 'echo $$ > "$1/cgroup.procs" && exec unshare --cgroup --pid --fork --kill-child --mount --mount-proc --uts --ipc --net sh -c "$3" inner "$2"' sh "$cg" "$dir" "$3" </dev/null >"$dir/unshare.log" 2>&1; echo "systemd exited: $?" >&2; } &`,
  "trap 'stop; exit 143' TERM INT HUP",
  "read -r _ || :",
  "stop",
].join("\n");

/** Starts a real systemd in its namespaces and waits until its units have reached their states. */
export async function startRealSystemd(): Promise<RealSystemd> {
  const missing = realSystemdMissing();
  if (missing) throw new Error(`a real systemd cannot run here: ${missing}`);
  const dir = await mkdtemp(join(tmpdir(), "aicr-systemd-"));
  const runDir = join(dir, "run");
  await mkdir(runDir);
  await mkdir(join(dir, "ns-run/aicr-host"), { recursive: true });
  await mkdir(join(dir, "ns-run/aicr-units"));
  for (const [name, text] of Object.entries(UNITS))
    await writeFile(join(dir, "ns-run/aicr-units", name), text);
  const cgroup = join(cgroup2Mount() ?? "", `aicr-systemd-${crypto.randomUUID().slice(0, 8)}`);
  const proc = Bun.spawn(["sh", "-c", SUPERVISE, "sh", dir, cgroup, INNER], {
    stdin: "pipe",
    stdout: "ignore",
    stderr: "pipe",
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
  });
  const stderr = collect(proc);
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      proc.stdin.end();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), STOP_MS);
      });
      const code = await Promise.race([proc.exited, late]).finally(() => clearTimeout(timer));
      if (code === "late") throw new Error(`the real systemd's supervisor did not stop within ${STOP_MS} ms`);
      const left = stderr().filter((l) => l.includes("left behind"));
      if (left.length) throw new Error(left.join("\n"));
    })();
    return stopped;
  };
  const privateSocket = join(runDir, "systemd/private");
  try {
    const outcome = await until(
      async () => {
        const exited = stderr().find((l) => l.startsWith("systemd exited"));
        return exited ? { exited } : unitsSettled(privateSocket);
      },
      () => `systemd's units to settle (${stderr().join(" ") || "no word from its supervisor"})`,
      { ms: START_MS, everyMs: 50, accept: (v) => v !== false },
    );
    if (typeof outcome === "object") throw new Error(`the real systemd did not start: ${outcome.exited}`);
  } catch (err) {
    // Quoted before stop() removes the directory it is in.
    const log = tail(dir);
    await stop().catch(() => {});
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${log}`);
  }
  return { runDir, privateSocket, stop };
}

function collect(proc: Subprocess<"pipe", "ignore", "pipe">): () => string[] {
  const lines: string[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) lines.push(...decoder.decode(chunk).split("\n").filter(Boolean));
  })();
  return () => lines;
}

/** The last lines systemd logged, and unshare's own output, for a failure message. */
function tail(dir: string): string {
  const read = (f: string): string => {
    try {
      return readFileSync(join(dir, f), "utf8").trimEnd().split("\n").slice(-25).join("\n");
    } catch {
      return "";
    }
  };
  return [read("unshare.log"), read("console.log")].filter(Boolean).join("\n");
}

/** True once the socket answers and every unit is in its expected state (through our own client). */
async function unitsSettled(socket: string): Promise<boolean> {
  if (!existsSync(socket)) return false;
  const signal = AbortSignal.timeout(5_000);
  const conn = await DbusConnection.open({ path: socket, uid: 0, signal, timeoutMs: 5_000 });
  try {
    for (const [unit, state] of Object.entries(EXPECTED)) {
      const manager = { path: "/org/freedesktop/systemd1", interface: "org.freedesktop.systemd1.Manager" };
      const loaded = await conn.call(
        { ...manager, member: "LoadUnit", signature: "s", body: [unit] },
        { signal },
      );
      const props = { path: loaded.body[0] as string, interface: "org.freedesktop.DBus.Properties" };
      const get = {
        ...props,
        member: "Get",
        signature: "ss",
        body: ["org.freedesktop.systemd1.Unit", "ActiveState"],
      };
      const active = ((await conn.call(get, { signal })).body[0] as DbusVariant).value;
      if (active !== state) return false;
    }
    return true;
  } finally {
    conn.close();
  }
}

/**
 * The SystemD collector against a real systemd (test/support/real-systemd.ts): in process through
 * collectSystemd, and through the compiled binary (`aicr snapshot --local` with AICR_HOST_ROOT at a
 * host root whose run/systemd is the real manager's). Needs root; skipped with the reason otherwise.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DbusConnection } from "../../src/collect/_dbus-client.ts";
import { collectSystemd } from "../../src/collect/_systemd.ts";
import { readUnit } from "../../src/collect/_systemd-dbus.ts";
import type { Measurement } from "../../src/collect/_types.ts";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { aicr, baseEnv, ROOT } from "../e2e/_aicr.ts";
import { type RealSystemd, realSystemdMissing, startRealSystemd } from "../support/real-systemd.ts";
import { until } from "../support/until.ts";
import { captureLog, collectorOptions } from "../unit/collect/_helpers.ts";

const missing = realSystemdMissing();
const never = new AbortController().signal;
const unit = (m: Measurement, name: string) => m.subtypes.find((s) => s.subtype === name)?.data;

describe.skipIf(missing !== undefined)(
  `SystemD from a real systemd${missing ? ` (skipped: ${missing})` : ""}`,
  () => {
    let systemd: RealSystemd;
    let hostRoot: string;
    let measurement: Measurement;
    let warnings: unknown[];

    beforeAll(async () => {
      systemd = await startRealSystemd();
      // A host root as the agent's pod sees the node: run/systemd is the node's /run/systemd.
      hostRoot = await mkdtemp(join(tmpdir(), "aicr-host-"));
      await mkdir(join(hostRoot, "run"));
      await symlink(join(systemd.runDir, "systemd"), join(hostRoot, "run/systemd"));
      const { log, lines } = captureLog();
      measurement = await collectSystemd(collectorOptions(hostRoot, { log }));
      warnings = lines.filter((l) => l.level === "warn");
    }, 60_000);

    afterAll(async () => {
      await systemd?.stop();
      if (hostRoot) await rm(hostRoot, { recursive: true, force: true });
    });

    test("containerd.service and kubelet.service are active and running, with their main PID", () => {
      expect(warnings).toEqual([]);
      expect(measurement.subtypes.map((s) => s.subtype)).toEqual([
        "containerd.service",
        "docker.service",
        "kubelet.service",
      ]);
      for (const name of ["containerd.service", "kubelet.service"]) {
        const data = unit(measurement, name) ?? {};
        expect(data).toMatchObject({ LoadState: "loaded", ActiveState: "active", SubState: "running" });
        expect(data.MainPID).toBeGreaterThan(0);
        expect(data.ExecStart).toStartWith('[["/bin/sleep",["/bin/sleep","infinity"],false,');
      }
    });

    test("docker.service is failed with Result exit-code", () => {
      expect(unit(measurement, "docker.service")).toMatchObject({
        LoadState: "loaded",
        ActiveState: "failed",
        SubState: "failed",
        Result: "exit-code",
        ExecMainStatus: 1,
        MainPID: 0,
      });
    });

    test("properties of every interface (Unit and Service), typed as readings", () => {
      const containerd = unit(measurement, "containerd.service") ?? {};
      expect(containerd).toMatchObject({
        Description: "containerd (aicr test unit)", // org.freedesktop.systemd1.Unit
        Type: "simple", // org.freedesktop.systemd1.Service
        Names: "containerd.service",
        Delegate: true,
        LimitNOFILE: "infinity",
        TasksMax: "infinity",
        ControlGroup: "/system.slice/containerd.service",
      });
      expect(typeof containerd.ActiveEnterTimestamp).toBe("number");
      expect(unit(measurement, "kubelet.service")?.Environment).toBe(
        '"KUBELET_ARGS=--v=2 --node-ip=10.0.0.7" HOME=/root',
      );
    });

    test("filtered properties are absent; the credential's value is nowhere", () => {
      for (const s of measurement.subtypes) {
        const keys = Object.keys(s.data);
        for (const dropped of ["AllowedCPUs", "AllowedMemoryNodes", "Asserts", "BPFProgram", "BusName", "Id"])
          expect(keys).not.toContain(dropped);
        expect(keys.filter((k) => k.includes("Credential"))).toEqual([]);
      }
      expect(JSON.stringify(measurement)).not.toContain("do-not-leak");
    });

    test("a unit that is not loaded (LoadUnit's not-found stub) is left out", async () => {
      const conn = await DbusConnection.open({
        path: systemd.privateSocket,
        uid: 0,
        signal: never,
        timeoutMs: 10_000,
      });
      try {
        expect(await readUnit(conn, "no-such-unit.service", never)).toBeUndefined();
        expect((await readUnit(conn, "kubelet.service", never))?.ActiveState).toBe("active");
      } finally {
        conn.close();
      }
    });

    test("a host root without the socket: an empty measurement and exactly one warning naming the path", async () => {
      const bare = await mkdtemp(join(tmpdir(), "aicr-host-"));
      const { log, lines } = captureLog();
      const m = await collectSystemd(collectorOptions(bare, { log }));
      await rm(bare, { recursive: true, force: true });
      expect(m).toEqual({ type: "SystemD", subtypes: [] });
      const warns = lines.filter((l) => l.level === "warn");
      expect(warns).toHaveLength(1);
      expect(warns[0]?.msg).toContain("SystemD is empty");
      expect(String(warns[0]?.tried)).toContain(`${bare}/run/systemd/private: connect ENOENT`);
    });

    test("through the compiled binary: aicr snapshot --local reads the real systemd beneath AICR_HOST_ROOT", async () => {
      const cwd = await mkdtemp(join(tmpdir(), "aicr-snap-"));
      const r = await aicr(["snapshot", "--local", "-t", "json"], {
        cwd,
        env: baseEnv({ AICR_HOST_ROOT: hostRoot, NODE_NAME: "node-1" }),
      });
      await rm(cwd, { recursive: true, force: true });
      expect(r.code, r.stderr).toBe(0);
      const systemdReadings = parseSnapshot(r.stdout, "stdout").measurements.find(
        (m) => m.type === "SystemD",
      );
      expect(systemdReadings?.subtypes.map((s) => s.subtype)).toEqual([
        "containerd.service",
        "docker.service",
        "kubelet.service",
      ]);
      const kubelet = systemdReadings && unit(systemdReadings, "kubelet.service");
      expect(kubelet).toMatchObject({ ActiveState: "active", SubState: "running" });
      expect(kubelet?.MainPID).toBeGreaterThan(0);
      expect(systemdReadings && unit(systemdReadings, "docker.service")?.Result).toBe("exit-code");
      expect(r.stderr).not.toContain("SystemD is empty");
    });
  },
);

/** The supervising shell of the systemd whose temp dir is `dir` (sh -c SUPERVISE sh <dir> <cgroup> …). */
function supervisorOf(dir: string): { pid: number; cgroup: string } | undefined {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (argv[0] === "sh" && argv[4] === dir && argv[5]) return { pid: Number(pid), cgroup: argv[5] };
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

const mountsUnder = (dir: string): string[] =>
  readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((l) => l.includes(dir));

describe.skipIf(missing !== undefined)("the real systemd leaves nothing behind", () => {
  test("stop(): no process, cgroup, mount or temp dir; the socket is gone", async () => {
    // What a systemd could touch on the host: its /run, and the v1 name=systemd hierarchy, where a
    // systemd makes its .slice and .scope cgroups (other suites' runc makes other names there).
    const v1 = (): string[] =>
      existsSync("/sys/fs/cgroup/systemd/cgroup.procs")
        ? readdirSync("/sys/fs/cgroup/systemd")
            .filter((e) => /\.(slice|scope)$|^aicr-/.test(e))
            .sort()
        : [];
    const host = () => ({
      private: existsSync("/run/systemd/private"),
      units: existsSync("/run/aicr-units"),
      v1: v1(),
    });
    const before = host();
    const systemd = await startRealSystemd();
    const dir = dirname(systemd.runDir);
    const supervisor = supervisorOf(dir);
    expect(supervisor).toBeDefined();
    const cgroup = supervisor?.cgroup ?? "";
    expect(readdirSync(cgroup)).toContain("system.slice");
    expect(host()).toEqual(before);
    await systemd.stop();
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(cgroup)).toBe(false);
    expect(supervisorOf(dir)).toBeUndefined();
    expect(mountsUnder(dir)).toEqual([]);
    await systemd.stop(); // a second stop is harmless
  }, 60_000);

  test("the death of the process that started it (bun test runs no exit hooks) cleans up the same", async () => {
    const script = `import { startRealSystemd } from ${JSON.stringify(join(ROOT, "test/support/real-systemd.ts"))};
const s = await startRealSystemd();
console.log(s.runDir);
await new Promise(() => {});`;
    const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const reader = child.stdout.getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done)
        throw new Error(`the child did not start a systemd: ${await new Response(child.stderr).text()}`);
      out += new TextDecoder().decode(value);
    }
    const dir = dirname(out.trim());
    const supervisor = supervisorOf(dir);
    expect(supervisor).toBeDefined();
    child.kill("SIGKILL");
    await child.exited;
    await until(
      () => !existsSync(dir) && !existsSync(supervisor?.cgroup ?? "") && !supervisorOf(dir),
      `the systemd of ${dir} and its cgroup ${supervisor?.cgroup} to be gone`,
      20_000,
    );
    expect(mountsUnder(dir)).toEqual([]);
  }, 60_000);
});

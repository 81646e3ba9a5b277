import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DbusVariant } from "../../../src/collect/_dbus-signature.ts";
import { collectSystemd, systemdFromNode } from "../../../src/collect/_systemd.ts";
import { systemdSockets } from "../../../src/collect/_systemd-dbus.ts";
import { peer, type Served, serve } from "./_dbus-peer.ts";
import { captureLog, collectorOptions, withTempDir } from "./_helpers.ts";

describe("SystemD collector over D-Bus (scripted peers; the real systemd: test/collect/systemd-dbus.test.ts)", () => {
  const servers: Served[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) s.close();
  });

  /** A host root whose run/systemd/private is a peer answering LoadUnit and GetAll through `props`. */
  async function hostWithSystemd(
    props: (unit: string) => [string, DbusVariant][] | Error,
    seen: string[] = [],
  ) {
    const root = mkdtempSync(join(tmpdir(), "aicr-host-"));
    const paths = new Map<string, string>();
    const served = await serve(
      peer((call, reply) => {
        if (call.member === "LoadUnit") {
          const unit = String(call.body[0]);
          const path = `/org/freedesktop/systemd1/unit/${unit.replaceAll(".", "_2e")}`;
          paths.set(path, unit);
          reply({ signature: "o", body: [path] });
        } else {
          const answer = props(paths.get(String(call.path)) ?? "");
          if (answer instanceof Error)
            reply({
              type: 3,
              errorName: "org.freedesktop.DBus.Error.AccessDenied",
              signature: "s",
              body: [answer.message],
            });
          else reply({ signature: "a{sv}", body: [answer] });
        }
      }, seen),
      join(root, "run/systemd/private"),
    );
    servers.push({
      path: served.path,
      close: () => {
        served.close();
        rmSync(root, { recursive: true, force: true });
      },
    });
    return root;
  }

  const loaded = (unit: string): [string, DbusVariant][] => [
    ["Id", { signature: "s", value: unit }],
    ["LoadState", { signature: "s", value: unit === "docker.service" ? "not-found" : "loaded" }],
    ["ActiveState", { signature: "s", value: "active" }],
    ["MainPID", { signature: "u", value: 42 }],
  ];

  test("one subtype per unit systemd knows, read beneath the host root; a not-found unit is left out", async () => {
    const seen: string[] = [];
    const root = await hostWithSystemd(loaded, seen);
    const { log, lines } = captureLog();
    const m = await collectSystemd(collectorOptions(root, { log }));
    expect(m.subtypes.map((s) => s.subtype)).toEqual(["containerd.service", "kubelet.service"]);
    expect(m.subtypes[0]?.data).toEqual({ LoadState: "loaded", ActiveState: "active", MainPID: 42 });
    expect(lines.filter((l) => l.level === "warn")).toEqual([]);
    // LoadUnit on the Manager, then GetAll with an empty interface name (every interface's properties).
    expect(seen).toContain(
      'org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager.LoadUnit(["kubelet.service"])',
    );
    expect(seen).toContain(
      'org.freedesktop.systemd1 /org/freedesktop/systemd1/unit/kubelet_2eservice org.freedesktop.DBus.Properties.GetAll([""])',
    );
  });

  test("a unit whose GetAll fails: one warning naming it, the others still read", async () => {
    const root = await hostWithSystemd((unit) =>
      unit === "kubelet.service" ? new Error("denied") : loaded(unit),
    );
    const { log, lines } = captureLog();
    const m = await collectSystemd(collectorOptions(root, { log }));
    expect(m.subtypes.map((s) => s.subtype)).toEqual(["containerd.service"]);
    const warns = lines.filter((l) => l.level === "warn");
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({
      unit: "kubelet.service",
      cause: "org.freedesktop.DBus.Error.AccessDenied: denied",
    });
  });

  test("no socket beneath the host root → empty measurement and ONE warning naming every path tried", async () => {
    await withTempDir(async (root) => {
      const { log, lines } = captureLog();
      const m = await collectSystemd(collectorOptions(root, { log }));
      expect(m).toEqual({ type: "SystemD", subtypes: [] });
      const warns = lines.filter((l) => l.level === "warn");
      expect(warns).toHaveLength(1);
      expect(warns[0]?.msg).toBe("systemd is not reachable over D-Bus; SystemD is empty");
      expect(String(warns[0]?.tried)).toContain(`${root}/run/systemd/private: connect ENOENT`);
      expect(String(warns[0]?.tried)).toContain(`${root}/run/dbus/system_bus_socket: connect ENOENT`);
    });
  });

  test("a socket nobody listens on (refused) and a server that rejects us: one warning with the cause", async () => {
    await withTempDir(async (root) => {
      mkdirSync(join(root, "run/systemd"), { recursive: true });
      writeFileSync(join(root, "run/systemd/private"), ""); // not a socket: connect is refused
      const { log, lines } = captureLog();
      expect((await collectSystemd(collectorOptions(root, { log }))).subtypes).toEqual([]);
      expect(lines.filter((l) => l.level === "warn").map((l) => String(l.tried))).toEqual([
        expect.stringContaining(`${root}/run/systemd/private: connect ECONNREFUSED`),
      ]);
    });
    const rejecting = await serve((s) => s.once("data", () => s.write("REJECTED EXTERNAL\r\n")));
    servers.push(rejecting);
    const root = mkdtempSync(join(tmpdir(), "aicr-host-"));
    mkdirSync(join(root, "run/systemd"), { recursive: true });
    symlinkSync(rejecting.path, join(root, "run/systemd/private"));
    const { log, lines } = captureLog();
    expect((await collectSystemd(collectorOptions(root, { log }))).subtypes).toEqual([]);
    rmSync(root, { recursive: true, force: true });
    const warns = lines.filter((l) => l.level === "warn");
    expect(warns).toHaveLength(1);
    expect(String(warns[0]?.tried)).toContain("authentication rejected (the server offers: EXTERNAL)");
  });

  test("cancelling the signal is an error, not an empty measurement (systemd mid-answer or silent)", async () => {
    const answering = await hostWithSystemd(loaded);
    const silent = mkdtempSync(join(tmpdir(), "aicr-host-"));
    servers.push(await serve(() => {}, join(silent, "run/systemd/private")));
    for (const root of [answering, silent]) {
      const controller = new AbortController();
      const run = collectSystemd(collectorOptions(root, { signal: controller.signal }));
      controller.abort(new Error("interrupted"));
      expect(String(await run.catch((e: unknown) => e))).toContain("interrupted");
    }
    rmSync(silent, { recursive: true, force: true });
  });

  test("root asks the private socket, then the system bus; anyone else the system bus (as systemctl)", () => {
    expect(systemdSockets(0)).toEqual([
      { path: "/run/systemd/private", bus: false },
      { path: "/run/dbus/system_bus_socket", bus: true },
    ]);
    expect(systemdSockets(1000)).toEqual([{ path: "/run/dbus/system_bus_socket", bus: true }]);
  });
});

describe("SystemD on talos (AICR_OS=talos): the agent's Node object", () => {
  const node = {
    metadata: { name: "talos-1" },
    status: {
      nodeInfo: { kubeletVersion: "v1.31.4", containerRuntimeVersion: "containerd://2.0.2" },
      conditions: [
        { type: "MemoryPressure", status: "False" },
        { type: "Ready", status: "True", reason: "KubeletReady", lastTransitionTime: "2026-01-31T10:00:00Z" },
      ],
    },
  };

  test("kubelet.service and the runtime's unit, each saying where it came from", () => {
    expect(systemdFromNode(node as never)).toEqual({
      type: "SystemD",
      subtypes: [
        {
          subtype: "containerd.service",
          data: { runtime: "containerd", "runtime-version": "2.0.2", source: "kubernetes-api" },
        },
        {
          subtype: "kubelet.service",
          data: {
            source: "kubernetes-api",
            "kubelet-version": "v1.31.4",
            ready: "True",
            "ready-reason": "KubeletReady",
            "ready-since": "2026-01-31T10:00:00Z",
            "condition.MemoryPressure": "False",
          },
        },
      ],
    });
  });

  test("collectSystemd reads the Node through the cluster reader, never D-Bus", async () => {
    const asked: string[] = [];
    const cluster = {
      getNode: async (name: string) => {
        asked.push(name);
        return node;
      },
    };
    const m = await collectSystemd({
      ...collectorOptions("/nonexistent-host-root", { env: { AICR_OS: "talos" } }),
      cluster: cluster as never,
      nodeName: "talos-1",
    });
    expect(asked).toEqual(["talos-1"]);
    expect(m.subtypes.map((s) => s.subtype)).toEqual(["containerd.service", "kubelet.service"]);
    expect(m.subtypes[1]?.data.ActiveState).toBeUndefined();
  });

  test("talos without a cluster: an empty measurement and a warning", async () => {
    const { log, lines } = captureLog();
    const m = await collectSystemd(collectorOptions("/", { env: { AICR_OS: "talos" }, log }));
    expect(m).toEqual({ type: "SystemD", subtypes: [] });
    expect(lines.some((l) => l.level === "warn" && l.msg.includes("talos"))).toBe(true);
  });
});

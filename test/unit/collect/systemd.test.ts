import { describe, expect, test } from "bun:test";
import { collectSystemd, parseSystemctlShow, systemdFromNode } from "../../../src/collect/_systemd.ts";
import { captureLog, collectorOptions, pathWith, withTempDir } from "./helpers.ts";

describe("SystemD collector", () => {
  test("one subtype per loaded unit; a not-found unit is left out", async () => {
    const m = await collectSystemd(collectorOptions("/", { env: { PATH: pathWith("systemd") } }));
    expect(m.type).toBe("SystemD");
    expect(m.subtypes.map((s) => s.subtype)).toEqual(["containerd.service", "kubelet.service"]);
    const containerd = m.subtypes[0]?.data ?? {};
    expect(containerd.ActiveState).toBe("active");
    expect(containerd.LimitNOFILE).toBe("infinity");
    expect(containerd.Delegate).toBe("yes");
    expect(containerd.ExecStart).toContain("path=/usr/bin/containerd");
  });

  test("filtered properties never appear", async () => {
    const m = await collectSystemd(collectorOptions("/", { env: { PATH: pathWith("systemd") } }));
    const keys = m.subtypes.flatMap((s) => Object.keys(s.data));
    for (const dropped of ["AllowedCPUs", "AllowedMemoryNodes", "Asserts", "BPFProgram", "BusName", "Id"]) {
      expect(keys).not.toContain(dropped);
    }
    expect(keys.filter((k) => k.includes("Credential"))).toEqual([]);
  });

  test("no systemctl on PATH → empty measurement", async () => {
    await withTempDir(async (emptyBin) => {
      const m = await collectSystemd(collectorOptions("/", { env: { PATH: emptyBin } }));
      expect(m).toEqual({ type: "SystemD", subtypes: [] });
    });
  });

  test("systemctl without a reachable systemd → empty measurement, no warning", async () => {
    const { log, lines } = captureLog();
    const m = await collectSystemd(collectorOptions("/", { env: { PATH: pathWith("no-systemd") }, log }));
    expect(m).toEqual({ type: "SystemD", subtypes: [] });
    expect(lines.filter((l) => l.level === "warn")).toEqual([]);
  });

  test("parseSystemctlShow keeps '=' inside values and ignores lines without a key", () => {
    expect(parseSystemctlShow("Environment=A=1 B=2\n=x\nnoequals\nLoadState=loaded\n")).toEqual({
      Environment: "A=1 B=2",
      LoadState: "loaded",
    });
    expect(parseSystemctlShow("LoadState=not-found\n")).toBeUndefined();
    expect(parseSystemctlShow("")).toBeUndefined();
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

  test("collectSystemd reads the Node through the cluster reader, never systemctl", async () => {
    const asked: string[] = [];
    const cluster = {
      getNode: async (name: string) => {
        asked.push(name);
        return node;
      },
    };
    const m = await collectSystemd({
      ...collectorOptions("/", { env: { PATH: pathWith("systemd"), AICR_OS: "talos" } }),
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

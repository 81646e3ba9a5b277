import { describe, expect, test } from "bun:test";
import { collectSystemd, parseSystemctlShow } from "../../../src/collect/_systemd.ts";
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

import { describe, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { runCommand } from "../../../src/collect/_exec.ts";
import { collectGpu } from "../../../src/collect/_gpu.ts";
import { collectPciHardware } from "../../../src/collect/_pci.ts";
import { collectSmi, parseSmiXml } from "../../../src/collect/_smi.ts";
import { BIN, captureLog, collectorOptions, HOSTS, pathWith, withTempDir } from "./_helpers.ts";

const H100_SMI = {
  driver: "570.124.06",
  "cuda-version": "12.8",
  "gpu-count": 8,
  "gpu.model": "NVIDIA H100 80GB HBM3",
  "gpu.product-architecture": "Hopper",
  "gpu.display-mode": "Enabled",
  "gpu.display-active": "Disabled",
  "gpu.persistence-mode": "Enabled",
  "gpu.addressing-mode": "None",
  "gpu.vbios-version": "96.00.99.00.01",
  "gpu.gsp-firmware-version": "570.124.06",
};

describe("smi subtype", () => {
  test("reads the recorded 8x H100 dump through a fake nvidia-smi on PATH", async () => {
    const smi = await collectSmi(collectorOptions("/", { env: { PATH: pathWith("h100") } }));
    expect(smi).toEqual(H100_SMI);
  });

  test("no nvidia-smi on PATH → gpu-count 0, logged at debug only", async () => {
    const { log, lines } = captureLog();
    const smi = await collectSmi(collectorOptions("/", { env: { PATH: "/nonexistent" }, log }));
    expect(smi).toEqual({ "gpu-count": 0 });
    expect(lines.filter((l) => l.level === "warn")).toEqual([]);
  });

  test("a non-zero exit → gpu-count 0 and a warning with the exit code", async () => {
    const { log, lines } = captureLog();
    const smi = await collectSmi(collectorOptions("/", { env: { PATH: pathWith("failing") }, log }));
    expect(smi).toEqual({ "gpu-count": 0 });
    const warn = lines.find((l) => l.level === "warn");
    expect(warn?.exitCode).toBe(9);
    expect(String(warn?.stderr)).toContain("couldn't communicate with the NVIDIA driver");
  });

  test("truncated XML → gpu-count 0 and a warning naming the parse failure", async () => {
    const { log, lines } = captureLog();
    const smi = await collectSmi(collectorOptions("/", { env: { PATH: pathWith("broken") }, log }));
    expect(smi).toEqual({ "gpu-count": 0 });
    expect(String(lines.find((l) => l.level === "warn")?.cause)).toContain("malformed XML");
  });

  test("parseSmiXml: zero GPUs, missing optional fields, a foreign root", () => {
    const none =
      "<nvidia_smi_log><driver_version>550.54.15</driver_version><attached_gpus>0</attached_gpus></nvidia_smi_log>";
    expect(parseSmiXml(none)).toEqual({ driver: "550.54.15", "gpu-count": 0 });
    const old = "<nvidia_smi_log><gpu id='a'><product_name>Tesla T4</product_name></gpu></nvidia_smi_log>";
    expect(parseSmiXml(old)).toEqual({ "gpu-count": 1, "gpu.model": "Tesla T4" });
    expect(() => parseSmiXml("<html></html>")).toThrow("unexpected root element <html>");
  });

  test("the recorded dump parses on its own", async () => {
    const xml = await readFile(join(BIN, "h100/nvidia-smi.xml"), "utf8");
    expect(parseSmiXml(xml)).toEqual(H100_SMI);
  });

  test("runCommand kills a command that outlives its timeout", async () => {
    const hanging = join(BIN, "hanging/nvidia-smi");
    const run = runCommand(hanging, [], {
      env: { PATH: pathWith() },
      signal: new AbortController().signal,
      timeoutMs: 50,
    });
    await expect(run).rejects.toThrow("did not finish within 50 ms");
  });

  test("runCommand stops when the caller aborts", async () => {
    const controller = new AbortController();
    const run = runCommand(join(BIN, "hanging/nvidia-smi"), [], {
      env: { PATH: pathWith() },
      signal: controller.signal,
      timeoutMs: 60_000,
    });
    controller.abort(new Error("collector timed out"));
    await expect(run).rejects.toThrow("collector timed out");
  });
});

describe("hardware subtype (PCI sysfs)", () => {
  test("8x H100 SXM: counts only NVIDIA display/3D controllers, names the SKU, sees the driver", async () => {
    const hw = await collectPciHardware(collectorOptions(join(HOSTS, "h100-node")));
    expect(hw).toEqual({
      "gpu-present": true,
      "gpu-count": 8,
      "driver-loaded": true,
      "detection-source": "pci-sysfs",
      model: "h100",
    });
  });

  test("a CPU node with a non-NVIDIA VGA device has no GPU and no model", async () => {
    const hw = await collectPciHardware(collectorOptions(join(HOSTS, "cpu-node")));
    expect(hw).toEqual({
      "gpu-present": false,
      "gpu-count": 0,
      "driver-loaded": false,
      "detection-source": "pci-sysfs",
    });
  });

  test("malformed entries (garbage vendor, missing class) are skipped; upper-case hex is read", async () => {
    const hw = await collectPciHardware(collectorOptions(join(HOSTS, "malformed-node")));
    expect(hw).toEqual({
      "gpu-present": true,
      "gpu-count": 1,
      "driver-loaded": false,
      "detection-source": "pci-sysfs",
      model: "l4",
    });
  });

  test("no PCI sysfs at all → no hardware subtype (unknown, not 'no GPU')", async () => {
    await withTempDir(async (root) => {
      expect(await collectPciHardware(collectorOptions(root))).toBeUndefined();
    });
  });
});

describe("GPU collector", () => {
  test("smi then hardware on the H100 fixture", async () => {
    const m = await collectGpu(
      collectorOptions(join(HOSTS, "h100-node"), { env: { PATH: pathWith("h100") } }),
    );
    expect(m.type).toBe("GPU");
    expect(m.subtypes.map((s) => s.subtype)).toEqual(["smi", "hardware"]);
    expect(m.subtypes[0]?.data["gpu-count"]).toBe(8);
  });
});

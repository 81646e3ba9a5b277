import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { hostPath, readHostFile } from "./_host-fs.ts";
import { parseModules } from "./_os-parse.ts";
import type { CollectorOptions, Readings } from "./_types.ts";

const NVIDIA_VENDOR = 0x10de;
// PCI base class 03 (display): subclass 00 is a VGA controller, 02 a 3D controller (headless datacenter GPUs).
const GPU_CLASSES = new Set([0x0300, 0x0302]);
const PCI_DEVICES = "/sys/bus/pci/devices";

/**
 * NVIDIA PCI device IDs of datacenter GPUs → SKU. IDs from the PCI ID database (pci.ids,
 * https://pci-ids.ucw.cz/read/PC/10de, e.g. "2330 GH100 [H100 SXM5 80GB]"), cross-checked against
 * NVIDIA/aicr pkg/collector/gpu/device_ids.go. An unknown ID yields no model rather than a guess.
 */
export const DATACENTER_SKUS: Readonly<Record<string, string>> = {
  "20b0": "a100", // GA100 [A100 SXM4 40GB]
  "20b1": "a100", // GA100 [A100 PCIe 40GB]
  "20f1": "a100", // GA100 [A100 PCIe 40GB]
  "20b2": "a100", // GA100 [A100 SXM4 80GB]
  "20b5": "a100", // GA100 [A100 PCIe 80GB]
  "2330": "h100", // GH100 [H100 SXM5 80GB]
  "2331": "h100", // GH100 [H100 PCIe]
  "2335": "h200", // GH100 [H200 SXM 141GB]
  "233b": "h200", // GH100 [H200 NVL]
  "2901": "b200", // GB100 [B200]
  "26b9": "l40s", // AD102GL [L40S]
  "27b8": "l4", // AD104GL [L4]
  "2236": "a10", // GA102GL [A10]
};

function hexField(content: string | undefined): number | undefined {
  const trimmed = content?.trim() ?? "";
  return /^0x[0-9a-fA-F]+$/.test(trimmed) ? Number.parseInt(trimmed.slice(2), 16) : undefined;
}

/** Device ID (4 lower-case hex digits) of an NVIDIA display/3D controller, else undefined. */
async function nvidiaGpuDevice(options: CollectorOptions, address: string): Promise<string | undefined> {
  const dir = `${PCI_DEVICES}/${address}`;
  const [vendor, klass, device] = await Promise.all(
    ["vendor", "class", "device"].map((f) =>
      readHostFile(options.hostRoot, `${dir}/${f}`).catch(() => undefined),
    ),
  );
  const cls = hexField(klass);
  const id = hexField(device);
  if (hexField(vendor) !== NVIDIA_VENDOR || cls === undefined || id === undefined) return undefined;
  return GPU_CLASSES.has(cls >> 8) ? id.toString(16).padStart(4, "0") : undefined;
}

/**
 * The `hardware` subtype from PCI sysfs: works before any driver is installed. Undefined when the
 * host root has no PCI sysfs at all (detection impossible, which is not the same as "no GPU").
 */
export async function collectPciHardware(options: CollectorOptions): Promise<Readings | undefined> {
  let entries: Dirent[];
  try {
    entries = await readdir(hostPath(options.hostRoot, PCI_DEVICES), { withFileTypes: true });
  } catch (err) {
    options.log.debug("PCI sysfs not readable; GPU hardware not detected", { cause: String(err) });
    return undefined;
  }
  const addresses = entries.map((e) => e.name).sort();
  const devices = (await Promise.all(addresses.map((a) => nvidiaGpuDevice(options, a)))).filter(
    (d): d is string => d !== undefined,
  );
  const modules = await readHostFile(options.hostRoot, "/proc/modules").catch(() => undefined);
  const out: Readings = {
    "gpu-present": devices.length > 0,
    "gpu-count": devices.length,
    "driver-loaded": modules !== undefined && parseModules(modules).nvidia === true,
    "detection-source": "pci-sysfs",
  };
  const skus = new Set(devices.map((d) => DATACENTER_SKUS[d]));
  const [only] = skus;
  // A model is reported only when every GPU is the same known SKU.
  if (skus.size === 1 && only !== undefined) out.model = only;
  return out;
}

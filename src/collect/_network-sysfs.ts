import { readdir, readlink, realpath } from "node:fs/promises";
import { posix } from "node:path";
import { hostPath, readHostFile } from "./_host-fs.ts";
import type { CollectorOptions } from "./_types.ts";

/**
 * The node's network hardware as sysfs shows it beneath the host root: physical functions (PFs) from
 * /sys/class/net and /sys/class/infiniband, NVIDIA GPUs from /sys/bus/pci/devices, each with the
 * PCIe path its device link resolves to (for GPU↔NIC affinity). Virtual interfaces (no `device`) and
 * SR-IOV virtual functions (a `physfn` link) are skipped. Reads only; nothing is written.
 */

export interface PciPlace {
  /** `0000:18:00.0` */
  pci: string;
  /** `pci0000:15` (the host bridge), or "" when the path shows none. */
  rootComplex: string;
  /** PCI bridges from the root complex down to the device's parent. */
  bridges: string[];
  numaNode?: number | undefined;
}

export interface IbPort {
  port: string;
  linkLayer?: string | undefined;
  state?: string | undefined;
  rate?: string | undefined;
}

export interface NicPf extends PciPlace {
  netdev?: string | undefined;
  rdmaDevice?: string | undefined;
  vendorId?: string | undefined;
  deviceId?: string | undefined;
  driver?: string | undefined;
  sriovTotalVfs?: number | undefined;
  sriovNumVfs?: number | undefined;
  speedMbps?: number | undefined;
  operstate?: string | undefined;
  firmwareVersion?: string | undefined;
  boardId?: string | undefined;
  nodeGuid?: string | undefined;
  ports: IbPort[];
}

export interface GpuPci extends PciPlace {
  deviceId: string;
}

const PCI_ADDRESS = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;
const ROOT_COMPLEX = /^pci[0-9a-f]{4}:[0-9a-f]{2}$/;
const NVIDIA_VENDOR = "10de";

async function list(hostRoot: string, abs: string): Promise<string[]> {
  try {
    return (await readdir(hostPath(hostRoot, abs))).sort();
  } catch {
    return [];
  }
}

async function text(hostRoot: string, abs: string): Promise<string | undefined> {
  const content = await readHostFile(hostRoot, abs).catch(() => undefined);
  const trimmed = content?.trim();
  return trimmed ? trimmed : undefined;
}

async function int(hostRoot: string, abs: string): Promise<number | undefined> {
  const t = await text(hostRoot, abs);
  return t !== undefined && /^-?\d+$/.test(t) ? Number(t) : undefined;
}

/** `0x15b3` → `15b3`. */
async function hexId(hostRoot: string, abs: string): Promise<string | undefined> {
  const t = (await text(hostRoot, abs))?.toLowerCase();
  return t && /^0x[0-9a-f]{4}$/.test(t) ? t.slice(2) : undefined;
}

/** The host path a sysfs link resolves to (re-rooted), or undefined when it is absent or leaves the host root. */
async function resolveLink(hostRoot: string, abs: string): Promise<string | undefined> {
  try {
    const root = await realpath(hostRoot || "/");
    const real = await realpath(hostPath(hostRoot, abs));
    if (root === "/") return real;
    return real.startsWith(`${root}/`) ? real.slice(root.length) : undefined;
  } catch {
    return undefined;
  }
}

async function exists(hostRoot: string, abs: string): Promise<boolean> {
  return (await resolveLink(hostRoot, abs)) !== undefined;
}

/** The PCI device at a resolved sysfs path, with its place in the PCIe tree. */
async function pciPlace(hostRoot: string, devicePath: string): Promise<PciPlace | undefined> {
  const parts = devicePath.split("/").filter(Boolean);
  const pci = parts.at(-1) ?? "";
  if (!PCI_ADDRESS.test(pci)) return undefined;
  const rootComplex = parts.find((p) => ROOT_COMPLEX.test(p)) ?? "";
  const bridges = parts.slice(0, -1).filter((p) => PCI_ADDRESS.test(p));
  const numa = await int(hostRoot, `${devicePath}/numa_node`);
  return { pci, rootComplex, bridges, numaNode: numa !== undefined && numa >= 0 ? numa : undefined };
}

async function driverName(hostRoot: string, devicePath: string): Promise<string | undefined> {
  try {
    return posix.basename(await readlink(hostPath(hostRoot, `${devicePath}/driver`)));
  } catch {
    return undefined;
  }
}

/** A physical function's PCI facts, or undefined for a VF or a device that is not on PCI. */
async function pciFunction(hostRoot: string, deviceLink: string): Promise<NicPf | undefined> {
  const devicePath = await resolveLink(hostRoot, deviceLink);
  if (!devicePath || (await exists(hostRoot, `${devicePath}/physfn`))) return undefined;
  const place = await pciPlace(hostRoot, devicePath);
  if (!place) return undefined;
  const [vendorId, deviceId, driver, sriovTotalVfs, sriovNumVfs] = await Promise.all([
    hexId(hostRoot, `${devicePath}/vendor`),
    hexId(hostRoot, `${devicePath}/device`),
    driverName(hostRoot, devicePath),
    int(hostRoot, `${devicePath}/sriov_totalvfs`),
    int(hostRoot, `${devicePath}/sriov_numvfs`),
  ]);
  return { ...place, vendorId, deviceId, driver, sriovTotalVfs, sriovNumVfs, ports: [] };
}

/** `4: ACTIVE` → `ACTIVE`. */
const afterColon = (s: string | undefined): string | undefined => s?.replace(/^\d+:\s*/, "") || undefined;

async function ibPorts(hostRoot: string, dev: string): Promise<IbPort[]> {
  const base = `/sys/class/infiniband/${dev}/ports`;
  const ports = (await list(hostRoot, base)).filter((p) => /^\d+$/.test(p));
  ports.sort((a, b) => Number(a) - Number(b));
  return Promise.all(
    ports.map(async (port) => ({
      port,
      linkLayer: await text(hostRoot, `${base}/${port}/link_layer`),
      state: afterColon(await text(hostRoot, `${base}/${port}/state`)),
      rate: await text(hostRoot, `${base}/${port}/rate`),
    })),
  );
}

/** Every PF on the host, by PCI address order; the netdev and RDMA views of one function merged. */
export async function readNicPfs(options: CollectorOptions): Promise<NicPf[]> {
  const { hostRoot } = options;
  const byPci = new Map<string, NicPf>();
  for (const netdev of await list(hostRoot, "/sys/class/net")) {
    options.signal.throwIfAborted();
    const pf = await pciFunction(hostRoot, `/sys/class/net/${netdev}/device`);
    if (!pf || byPci.get(pf.pci)?.netdev) continue;
    const dir = `/sys/class/net/${netdev}`;
    const speed = await int(hostRoot, `${dir}/speed`);
    byPci.set(pf.pci, {
      ...pf,
      netdev,
      speedMbps: speed !== undefined && speed > 0 ? speed : undefined,
      operstate: await text(hostRoot, `${dir}/operstate`),
    });
  }
  for (const dev of await list(hostRoot, "/sys/class/infiniband")) {
    options.signal.throwIfAborted();
    const pf = await pciFunction(hostRoot, `/sys/class/infiniband/${dev}/device`);
    if (!pf) continue;
    const dir = `/sys/class/infiniband/${dev}`;
    const known = byPci.get(pf.pci) ?? pf;
    if (known.rdmaDevice) continue;
    byPci.set(pf.pci, {
      ...known,
      rdmaDevice: dev,
      firmwareVersion: await text(hostRoot, `${dir}/fw_ver`),
      boardId: await text(hostRoot, `${dir}/board_id`),
      nodeGuid: await text(hostRoot, `${dir}/node_guid`),
      ports: await ibPorts(hostRoot, dev),
    });
  }
  return [...byPci.values()].sort((a, b) => a.pci.localeCompare(b.pci));
}

/** NVIDIA display/3D controllers (class 03xx) under /sys/bus/pci/devices, with their PCIe place. */
export async function readGpuPlaces(options: CollectorOptions): Promise<GpuPci[]> {
  const { hostRoot } = options;
  const gpus: GpuPci[] = [];
  for (const address of await list(hostRoot, "/sys/bus/pci/devices")) {
    const link = `/sys/bus/pci/devices/${address}`;
    const [vendor, klass] = await Promise.all([
      hexId(hostRoot, `${link}/vendor`),
      text(hostRoot, `${link}/class`),
    ]);
    if (vendor !== NVIDIA_VENDOR || !klass?.toLowerCase().startsWith("0x03")) continue;
    const path = await resolveLink(hostRoot, link);
    const place = path ? await pciPlace(hostRoot, path) : undefined;
    const deviceId = await hexId(hostRoot, `${link}/device`);
    if (place && deviceId) gpus.push({ ...place, deviceId });
  }
  return gpus;
}

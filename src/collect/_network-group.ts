import type { Subtype } from "../snapshot/schema.ts";
import type { GpuPci, NicPf } from "./_network-sysfs.ts";
import type { Readings } from "./_types.ts";

/** Pure: the PFs sysfs showed, grouped per hardware type and fabric, and their GPU affinity. */

/** NIC device IDs (vendor 15b3) → model, from the PCI ID database; an unknown ID yields no model. */
export const NIC_MODELS: Readonly<Record<string, string>> = {
  "15b3:1015": "ConnectX-4 Lx",
  "15b3:1017": "ConnectX-5",
  "15b3:1019": "ConnectX-5 Ex",
  "15b3:101b": "ConnectX-6",
  "15b3:101d": "ConnectX-6 Dx",
  "15b3:101f": "ConnectX-6 Lx",
  "15b3:1021": "ConnectX-7",
  "15b3:1023": "ConnectX-8",
  "15b3:a2d6": "BlueField-2",
  "15b3:a2dc": "BlueField-3",
};

export type Fabric = "infiniband" | "roce" | "ethernet";

/** InfiniBand link layer → infiniband; an RDMA device over Ethernet → roce; a plain netdev → ethernet. */
export function fabricOf(pf: NicPf): Fabric {
  const layer = pf.ports[0]?.linkLayer?.toLowerCase();
  if (layer === "infiniband") return "infiniband";
  return pf.rdmaDevice ? "roce" : "ethernet";
}

const joined = (values: (string | number | undefined)[]): string =>
  [...new Set(values.filter((x): x is string | number => x !== undefined).map(String))].sort().join(",");

function set(out: Readings, key: string, value: string | number | boolean | undefined): void {
  if (value !== undefined && value !== "") out[key] = value;
}

function pfData(pf: NicPf): Readings {
  const data: Readings = {};
  set(data, "vendor-id", pf.vendorId);
  set(data, "device-id", pf.deviceId);
  set(data, "kernel-module", pf.driver);
  set(data, "numa-node", pf.numaNode);
  set(data, "sriov-totalvfs", pf.sriovTotalVfs);
  set(data, "sriov-numvfs", pf.sriovNumVfs);
  set(data, "speed-mbps", pf.speedMbps);
  set(data, "operstate", pf.operstate);
  set(data, "firmware-version", pf.firmwareVersion);
  set(data, "board-id", pf.boardId);
  set(data, "node-guid", pf.nodeGuid);
  set(data, "port-count", pf.rdmaDevice ? pf.ports.length : undefined);
  for (const p of pf.ports) {
    set(data, `port-${p.port}.link-layer`, p.linkLayer);
    set(data, `port-${p.port}.state`, p.state);
    set(data, `port-${p.port}.rate`, p.rate);
  }
  return data;
}

function pfContext(pf: NicPf): Record<string, string> {
  const context: Record<string, string> = { "pci-address": pf.pci };
  if (pf.netdev) context.netdev = pf.netdev;
  if (pf.rdmaDevice) context["rdma-device"] = pf.rdmaDevice;
  return context;
}

function groupData(pfs: NicPf[], fabric: Fabric): Readings {
  const [first] = pfs;
  const data: Readings = { fabric, "pf-count": pfs.length };
  set(data, "vendor-id", first?.vendorId);
  set(data, "device-id", first?.deviceId);
  set(data, "model", NIC_MODELS[`${first?.vendorId}:${first?.deviceId}`]);
  set(data, "kernel-module", joined(pfs.map((p) => p.driver)));
  set(data, "firmware-versions", joined(pfs.map((p) => p.firmwareVersion)));
  set(data, "board-ids", joined(pfs.map((p) => p.boardId)));
  set(data, "numa-nodes", joined(pfs.map((p) => p.numaNode)));
  set(data, "link-layer", joined(pfs.flatMap((p) => p.ports.map((x) => x.linkLayer))));
  const ports = pfs.flatMap((p) => p.ports);
  if (ports.length > 0) set(data, "ports-active", ports.filter((p) => p.state === "ACTIVE").length);
  data["sriov-capable"] = pfs.some((p) => (p.sriovTotalVfs ?? 0) > 0);
  set(
    data,
    "sriov-numvfs",
    pfs.some((p) => p.sriovNumVfs !== undefined) ? sum(pfs, "sriovNumVfs") : undefined,
  );
  return data;
}

const sum = (pfs: NicPf[], key: "sriovNumVfs"): number => pfs.reduce((n, p) => n + (p[key] ?? 0), 0);

/** `nic-15b3-1021-infiniband`: one subtype per (vendor, device, fabric); its PFs as ordered items. */
export function nicGroups(pfs: readonly NicPf[]): Subtype[] {
  const groups = new Map<string, NicPf[]>();
  for (const pf of pfs) {
    const name = `nic-${pf.vendorId ?? "unknown"}-${pf.deviceId ?? "unknown"}-${fabricOf(pf)}`;
    groups.set(name, [...(groups.get(name) ?? []), pf]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([subtype, members]) => ({
      subtype,
      data: groupData(members, fabricOf(members[0]!)),
      items: members.map((pf) => ({ context: pfContext(pf), data: pfData(pf) })),
    }));
}

/** Closest first, as nvidia-smi topo ranks PCIe paths. */
export const AFFINITY = ["pcie-switch", "host-bridge", "numa-node", "cross-numa", "unknown"] as const;
export type Affinity = (typeof AFFINITY)[number];

/** How a NIC and a GPU reach each other: a shared PCIe bridge, the same host bridge, NUMA node, or neither. */
export function affinityOf(nic: NicPf, gpu: GpuPci): { relation: Affinity; bridge?: string } {
  const sameRoot = nic.rootComplex !== "" && nic.rootComplex === gpu.rootComplex;
  let common: string | undefined;
  for (let i = 0; i < Math.min(nic.bridges.length, gpu.bridges.length); i++) {
    if (nic.bridges[i] !== gpu.bridges[i]) break;
    common = nic.bridges[i];
  }
  if (sameRoot && common) return { relation: "pcie-switch", bridge: common };
  if (sameRoot) return { relation: "host-bridge" };
  if (nic.numaNode === undefined || gpu.numaNode === undefined) return { relation: "unknown" };
  return { relation: nic.numaNode === gpu.numaNode ? "numa-node" : "cross-numa" };
}

/** `gpu-nic-affinity`: per PF, the GPUs at its closest PCIe relation; undefined without GPUs or RDMA PFs. */
export function affinitySubtype(pfs: readonly NicPf[], gpus: readonly GpuPci[]): Subtype | undefined {
  const nics = pfs.filter((p) => fabricOf(p) !== "ethernet");
  if (gpus.length === 0 || nics.length === 0) return undefined;
  const counts = new Map<Affinity, number>();
  const items = nics.map((nic) => {
    const pairs = gpus.map((gpu) => ({ gpu, ...affinityOf(nic, gpu) }));
    const best = Math.min(...pairs.map((p) => AFFINITY.indexOf(p.relation)));
    const nearest = pairs.filter((p) => AFFINITY.indexOf(p.relation) === best);
    const relation = AFFINITY[best]!;
    counts.set(relation, (counts.get(relation) ?? 0) + 1);
    const data: Readings = { relation, "nearest-gpus": nearest.map((p) => p.gpu.pci).join(",") };
    set(data, "common-bridge", joined(nearest.map((p) => p.bridge)));
    set(data, "numa-node", nic.numaNode);
    return { context: pfContext(nic), data };
  });
  const data: Readings = { "gpu-count": gpus.length, "nic-count": nics.length };
  for (const relation of AFFINITY) set(data, `nics-${relation}`, counts.get(relation));
  return { subtype: "gpu-nic-affinity", data, items };
}

/** `summary`: counts over every PF sysfs showed. */
export function summarySubtype(pfs: readonly NicPf[], gpus: readonly GpuPci[]): Subtype {
  return {
    subtype: "summary",
    data: {
      source: "sysfs",
      "pf-count": pfs.length,
      "group-count": nicGroups(pfs).length,
      fabrics: joined(pfs.map(fabricOf)),
      "gpu-count": gpus.length,
    },
  };
}

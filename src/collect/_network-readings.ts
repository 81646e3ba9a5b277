import type { Subtype } from "../snapshot/schema.ts";
import type { ClusterConfig, ClusterConfigGroup } from "./_network-config.ts";
import type { Readings } from "./_types.ts";

/** Pure: a cluster-config.yaml as NetworkTopology subtypes; nested values as dotted readings. */

/** Scalars as they are, maps as dotted keys, lists as JSON text (readings are scalars only). */
export function flatten(value: unknown, prefix: string, out: Readings = {}): Readings {
  if (value === null || value === undefined) return out;
  if (typeof value === "string" || typeof value === "boolean") out[prefix] = value;
  else if (typeof value === "number") {
    if (Number.isFinite(value)) out[prefix] = value;
  } else if (Array.isArray(value)) out[prefix] = JSON.stringify(value);
  else if (typeof value === "object") {
    for (const [k, v] of Object.entries(value).sort(([a], [b]) => a.localeCompare(b)))
      flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else out[prefix] = String(value);
  return out;
}

const KNOWN_PF = new Set(["pciAddress", "networkInterface", "rdmaDevice"]);
const KNOWN_GROUP = new Set(["identifier", "pfs", "workerNodes"]);

function pfItem(pf: Record<string, unknown>): { context: Record<string, string>; data: Readings } {
  const context: Record<string, string> = {};
  if (typeof pf.pciAddress === "string") context["pci-address"] = pf.pciAddress;
  if (typeof pf.networkInterface === "string") context.netdev = pf.networkInterface;
  if (typeof pf.rdmaDevice === "string") context["rdma-device"] = pf.rdmaDevice;
  const rest = Object.fromEntries(Object.entries(pf).filter(([k]) => !KNOWN_PF.has(k)));
  // An unquoted deviceID such as 1015 reads as a number in YAML; it is a hex ID either way.
  if (typeof rest.deviceID === "number") rest.deviceID = String(rest.deviceID);
  return { context, data: flatten(rest, "") };
}

function groupSubtype(group: ClusterConfigGroup, index: number): Subtype {
  const rest = Object.fromEntries(Object.entries(group).filter(([k]) => !KNOWN_GROUP.has(k)));
  const pfs = group.pfs ?? [];
  const data: Readings = { ...flatten(rest, ""), "pf-count": pfs.length };
  const workers = group.workerNodes ?? [];
  data["worker-count"] = workers.length;
  if (workers.length > 0) data["worker-nodes"] = workers.join(",");
  const context: Record<string, string> = { index: String(index) };
  if (group.identifier) context.identifier = group.identifier;
  return { subtype: `cluster-config-group-${index}`, context, data, items: pfs.map(pfItem) };
}

/** `cluster-config`: the file's settings sections; `cluster-config-group-<n>`: each node group and its PFs. */
export function clusterConfigSubtypes(config: ClusterConfig, path: string): Subtype[] {
  const { clusterConfig, ...settings } = config;
  const groups = clusterConfig ?? [];
  return [
    {
      subtype: "cluster-config",
      context: { source: path },
      data: { ...flatten(settings, ""), "group-count": groups.length },
    },
    ...groups.map(groupSubtype),
  ];
}

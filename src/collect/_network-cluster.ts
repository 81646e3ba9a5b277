import type { Subtype } from "../snapshot/schema.ts";
import type { CustomObject } from "./_k8s-source.ts";
import type { Readings } from "./_types.ts";

/**
 * Pure: the NIC operators' objects as readings. NicDevice (configuration.net.nvidia.com) is what the
 * NIC configuration daemon reports per NIC; NicClusterPolicy (mellanox.com) is the Network Operator's
 * deployment. Both are only read, and only when their API is served.
 */

const str = (x: unknown): string | undefined => (typeof x === "string" && x !== "" ? x : undefined);
const joined = (values: (string | undefined)[]): string =>
  [...new Set(values.filter((x): x is string => x !== undefined))].sort().join(",");

/** `nic-devices`: counts and the distinct types, part numbers and firmware versions, cluster-wide and on this node. */
export function nicDevicesSubtype(devices: readonly CustomObject[], nodeName: string): Subtype | undefined {
  if (devices.length === 0) return undefined;
  const status = devices.map((d) => d.status ?? {});
  const data: Readings = {
    count: devices.length,
    "node-count": new Set(status.map((s) => str(s.node)).filter(Boolean)).size,
    "this-node-count": status.filter((s) => s.node === nodeName).length,
  };
  const fields: [string, string][] = [
    ["types", "type"],
    ["part-numbers", "partNumber"],
    ["firmware-versions", "firmwareVersion"],
    ["psids", "psid"],
  ];
  for (const [key, field] of fields) {
    const value = joined(status.map((s) => str(s[field])));
    if (value) data[key] = value;
  }
  const ports = status.reduce((n, s) => n + (Array.isArray(s.ports) ? s.ports.length : 0), 0);
  data["port-count"] = ports;
  return { subtype: "nic-devices", data };
}

/** `nic-cluster-policy`: per policy, its state and the version of each deployed component. */
export function nicClusterPolicySubtype(policies: readonly CustomObject[]): Subtype | undefined {
  if (policies.length === 0) return undefined;
  const data: Readings = { count: policies.length };
  for (const p of policies) {
    const name = p.metadata?.name ?? "unnamed";
    const state = str(p.status?.state);
    if (state) data[`${name}.state`] = state;
    const components = Object.entries(p.spec ?? {}).filter(
      ([, value]) => value !== null && typeof value === "object" && !Array.isArray(value),
    );
    data[`${name}.components`] = components
      .map(([k]) => k)
      .sort()
      .join(",");
    for (const [component, value] of components) {
      const version = str((value as Record<string, unknown>).version);
      if (version) data[`${name}.${component}.version`] = version;
    }
  }
  return { subtype: "nic-cluster-policy", data };
}

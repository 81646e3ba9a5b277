import type { Subtype } from "../snapshot/schema.ts";
import type { ClusterReader, CustomObject } from "./_k8s-source.ts";
import { nicClusterPolicySubtype, nicDevicesSubtype } from "./_network-cluster.ts";
import { checkClusterConfigFile } from "./_network-config.ts";
import { affinitySubtype, nicGroups, summarySubtype } from "./_network-group.ts";
import { clusterConfigSubtypes } from "./_network-readings.ts";
import { readGpuPlaces, readNicPfs } from "./_network-sysfs.ts";
import { type CollectorOptions, type Env, errorText, type Measurement, throwIfAborted } from "./_types.ts";

export interface NetworkOptions extends CollectorOptions {
  /** Read NicDevice / NicClusterPolicy when the run asked for discovery and a cluster answers. */
  cluster?: ClusterReader | undefined;
  nodeName: string;
  discover: boolean;
  /** A k8s-launch-kit cluster-config.yaml to fold in. */
  clusterConfigPath?: string | undefined;
}

/** NetworkTopology runs only with --discover-network (AICR_DISCOVER_NETWORK=true) or --cluster-config. */
export function networkRequested(env: Env): { discover: boolean; clusterConfigPath?: string } {
  const path = env.AICR_CLUSTER_CONFIG_PATH?.trim();
  return { discover: env.AICR_DISCOVER_NETWORK === "true", ...(path ? { clusterConfigPath: path } : {}) };
}

async function readObjects(
  o: NetworkOptions,
  what: string,
  read: ((options: { signal: AbortSignal }) => Promise<CustomObject[]>) | undefined,
): Promise<CustomObject[]> {
  if (!read) return [];
  try {
    return await read({ signal: o.signal });
  } catch (err) {
    throwIfAborted(o.signal);
    // One unreadable source leaves that subtype out, not the node's hardware.
    o.log.warn(`${what} not read; left out of NetworkTopology`, { cause: errorText(err) });
    return [];
  }
}

async function clusterSubtypes(o: NetworkOptions): Promise<Subtype[]> {
  if (!o.discover || !o.cluster) return [];
  const cluster = o.cluster;
  const [devices, policies] = await Promise.all([
    readObjects(o, "NicDevice objects", cluster.listNicDevices?.bind(cluster)),
    readObjects(o, "NicClusterPolicy objects", cluster.listNicClusterPolicies?.bind(cluster)),
  ]);
  return [nicDevicesSubtype(devices, o.nodeName), nicClusterPolicySubtype(policies)].filter(
    (s): s is Subtype => s !== undefined,
  );
}

/**
 * NetworkTopology: the node's NIC physical functions grouped per hardware type and fabric, their
 * GPU affinity, the NIC operators' objects, and the cluster-config file. Undefined — no measurement,
 * not an empty one — when none of these has anything to say.
 */
export async function collectNetwork(o: NetworkOptions): Promise<Measurement | undefined> {
  const [pfs, gpus, fromCluster, config] = await Promise.all([
    readNicPfs(o),
    readGpuPlaces(o),
    clusterSubtypes(o),
    o.clusterConfigPath ? checkClusterConfigFile(o.clusterConfigPath) : undefined,
  ]);
  throwIfAborted(o.signal);
  const subtypes: Subtype[] = [];
  if (pfs.length > 0) {
    subtypes.push(summarySubtype(pfs, gpus), ...nicGroups(pfs));
    const affinity = affinitySubtype(pfs, gpus);
    if (affinity) subtypes.push(affinity);
  }
  subtypes.push(...fromCluster);
  if (config && o.clusterConfigPath) subtypes.push(...clusterConfigSubtypes(config, o.clusterConfigPath));
  return subtypes.length > 0 ? { type: "NetworkTopology", subtypes } : undefined;
}

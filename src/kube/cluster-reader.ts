import type { KubeClient } from "./client.ts";
import type { ClusterPolicy } from "./types.ts";

/** Custom objects are paged like pods and nodes. */
const CUSTOM_PAGE_SIZE = 500;

/**
 * Every object of `kind` in API group `group` (all namespaces), found by discovery: [] when the group
 * or the kind is not served, so a cluster without the operator is no error.
 */
async function listServedKind<T extends object>(
  client: KubeClient,
  group: string,
  kind: string,
): Promise<T[]> {
  const groupVersion = (await client.apiGroupVersions()).find((gv) => gv.startsWith(`${group}/`));
  if (!groupVersion) return [];
  const resources = await client.apiResources(groupVersion);
  if (!resources.some((r) => r.kind === kind && !r.name.includes("/"))) return [];
  const items: T[] = [];
  let continueToken: string | undefined;
  do {
    const page = await client.list<T>(groupVersion, kind, { limit: CUSTOM_PAGE_SIZE, continueToken });
    items.push(...page.items);
    continueToken = page.continueToken;
  } while (continueToken);
  return items;
}

/**
 * The reads the K8s, NodeTopology and NetworkTopology collectors make. Structurally the collectors' ClusterReader
 * (collect/k8s-source.ts), written here so that client-node stays behind this folder.
 */
export function clusterReaderFor(client: KubeClient) {
  return {
    serverVersion: () => client.serverVersion(),
    listPodsPage: <T extends object>(o: { limit: number; continueToken?: string | undefined }) =>
      client.listPodsAllNamespaces<T>(o),
    getNode: <T extends object>(name: string) => client.get<T>({ apiVersion: "v1", kind: "Node", name }),
    listNodesPage: <T extends object>(o: { limit: number; continueToken?: string | undefined }) =>
      client.list<T>("v1", "Node", { limit: o.limit, continueToken: o.continueToken }),
    /** Every ClusterPolicy in every API group that serves one (found by discovery, as the reference does). */
    async listClusterPolicies(): Promise<ClusterPolicy[]> {
      const groupVersions = await client.apiGroupVersions();
      const serving = await Promise.all(
        groupVersions.map(async (gv) => {
          const resources = await client.apiResources(gv).catch(() => []);
          return resources.some((r) => r.kind === "ClusterPolicy" && !r.name.includes("/")) ? gv : undefined;
        }),
      );
      const lists = await Promise.all(
        serving
          .filter((gv): gv is string => gv !== undefined)
          .map((gv) => client.list<ClusterPolicy>(gv, "ClusterPolicy")),
      );
      return lists.flatMap((l) => l.items);
    },
    /** NicDevice objects of the NIC configuration operator (read only; the API may be absent). */
    listNicDevices: <T extends object>() =>
      listServedKind<T>(client, "configuration.net.nvidia.com", "NicDevice"),
    /** NicClusterPolicy objects of the Network Operator (read only; the API may be absent). */
    listNicClusterPolicies: <T extends object>() =>
      listServedKind<T>(client, "mellanox.com", "NicClusterPolicy"),
  };
}

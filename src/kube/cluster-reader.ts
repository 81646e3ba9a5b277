import type { KubeClient } from "./client.ts";
import type { ClusterPolicy } from "./types.ts";

/**
 * The reads the K8s and NodeTopology collectors make. Structurally the collectors' ClusterReader
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
  };
}

import type { ClusterPolicy, Json, V1Node, V1Pod } from "../kube/types.ts";

/**
 * The cluster reads the K8s and NodeTopology collectors need, typed as the API's JSON of client-node's
 * models (kube/types.ts). kube/cluster-reader.ts implements it over KubeClient; tests pass literals.
 */

export interface ReadOptions {
  signal: AbortSignal;
}

export interface PageOptions extends ReadOptions {
  limit: number;
  /** The list's `metadata.continue` from the previous page; absent for the first page. */
  continueToken?: string | undefined;
}

export interface Page<T> {
  items: T[];
  /** Empty or absent on the last page. */
  continueToken?: string | undefined;
}

export interface ServerVersionInfo {
  gitVersion: string;
  platform?: string | undefined;
  goVersion?: string | undefined;
}

/** A custom object as read: only metadata, spec and status, all left open. */
export interface CustomObject {
  metadata?: { name?: string; namespace?: string };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export interface ClusterReader {
  /** Discovery `/version`. */
  serverVersion(options: ReadOptions): Promise<ServerVersionInfo>;
  /** Pods in all namespaces, one page at a time. */
  listPodsPage(options: PageOptions): Promise<Page<Json<V1Pod>>>;
  getNode(name: string, options: ReadOptions): Promise<Json<V1Node>>;
  /** Every object of kind ClusterPolicy, whatever its API group (found by discovery); [] when none is served. */
  listClusterPolicies(options: ReadOptions): Promise<ClusterPolicy[]>;
  listNodesPage(options: PageOptions): Promise<Page<Json<V1Node>>>;
  /** NicDevice objects (configuration.net.nvidia.com) in every namespace; [] when the API is not served. */
  listNicDevices?(options: ReadOptions): Promise<CustomObject[]>;
  /** NicClusterPolicy objects (mellanox.com); [] when the API is not served. */
  listNicClusterPolicies?(options: ReadOptions): Promise<CustomObject[]>;
}

/** Page size for pod and node lists, as the reference uses. */
export const LIST_PAGE_SIZE = 500;

/** Calls `fetchPage` until the continue token runs out, handing each page's items to `onItems`. */
export async function forEachPage<T>(
  fetchPage: (options: PageOptions) => Promise<Page<T>>,
  options: ReadOptions & { onItems: (items: T[]) => void },
): Promise<void> {
  let continueToken: string | undefined;
  do {
    options.signal.throwIfAborted();
    const page = await fetchPage({ signal: options.signal, limit: LIST_PAGE_SIZE, continueToken });
    options.onItems(page.items);
    continueToken = page.continueToken || undefined;
  } while (continueToken);
}

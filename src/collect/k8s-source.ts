/**
 * The cluster reads the K8s and NodeTopology collectors need, as plain shapes. The transport layer
 * implements this with @kubernetes/client-node; the field names match client-node's V1 models, so its
 * objects satisfy these types directly, and tests can pass literals.
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

export interface ContainerLike {
  image?: string | undefined;
}

export interface PodLike {
  metadata?: { name?: string | undefined; namespace?: string | undefined } | undefined;
  spec?:
    | {
        containers?: ContainerLike[] | undefined;
        initContainers?: ContainerLike[] | undefined;
        ephemeralContainers?: ContainerLike[] | undefined;
      }
    | undefined;
}

export interface TaintLike {
  key: string;
  value?: string | undefined;
  effect: string;
}

export interface NodeLike {
  metadata?: { name?: string | undefined; labels?: Record<string, string> | undefined } | undefined;
  spec?: { providerID?: string | undefined; taints?: TaintLike[] | undefined } | undefined;
  status?:
    | {
        nodeInfo?:
          | {
              containerRuntimeVersion?: string | undefined;
              kubeletVersion?: string | undefined;
              kernelVersion?: string | undefined;
              operatingSystem?: string | undefined;
              osImage?: string | undefined;
            }
          | undefined;
      }
    | undefined;
}

export interface ClusterPolicyLike {
  metadata?: { name?: string | undefined } | undefined;
  spec?: Record<string, unknown> | undefined;
}

export interface ClusterReader {
  /** Discovery `/version`. */
  serverVersion(options: ReadOptions): Promise<ServerVersionInfo>;
  /** Pods in all namespaces, one page at a time. */
  listPodsPage(options: PageOptions): Promise<Page<PodLike>>;
  getNode(name: string, options: ReadOptions): Promise<NodeLike>;
  /** Every object of kind ClusterPolicy, whatever its API group (found by discovery); [] when none is served. */
  listClusterPolicies(options: ReadOptions): Promise<ClusterPolicyLike[]>;
  listNodesPage(options: PageOptions): Promise<Page<NodeLike>>;
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

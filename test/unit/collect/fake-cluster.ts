import type {
  ClusterPolicyLike,
  ClusterReader,
  NodeLike,
  Page,
  PageOptions,
  PodLike,
  ServerVersionInfo,
} from "../../../src/collect/k8s-source.ts";

/** An in-memory ClusterReader that pages like the apiserver (limit + opaque continue token). */
export class FakeCluster implements ClusterReader {
  pageCalls = { pods: 0, nodes: 0 };
  failures: Partial<Record<"server" | "pods" | "node" | "policies" | "nodes", Error>> = {};

  constructor(
    readonly data: {
      version?: ServerVersionInfo;
      pods?: PodLike[];
      nodes?: NodeLike[];
      policies?: ClusterPolicyLike[];
    },
  ) {}

  private fail(what: keyof FakeCluster["failures"]): void {
    const err = this.failures[what];
    if (err) throw err;
  }

  private page<T>(items: T[], options: PageOptions): Page<T> {
    const start = options.continueToken ? Number(options.continueToken.replace("page-", "")) : 0;
    const end = Math.min(start + options.limit, items.length);
    return { items: items.slice(start, end), continueToken: end < items.length ? `page-${end}` : "" };
  }

  async serverVersion(): Promise<ServerVersionInfo> {
    this.fail("server");
    return this.data.version ?? { gitVersion: "v1.31.4" };
  }

  async listPodsPage(options: PageOptions): Promise<Page<PodLike>> {
    this.fail("pods");
    this.pageCalls.pods++;
    return this.page(this.data.pods ?? [], options);
  }

  async getNode(name: string): Promise<NodeLike> {
    this.fail("node");
    const node = (this.data.nodes ?? []).find((n) => n.metadata?.name === name);
    if (!node) throw new Error(`nodes "${name}" not found`);
    return node;
  }

  async listClusterPolicies(): Promise<ClusterPolicyLike[]> {
    this.fail("policies");
    return this.data.policies ?? [];
  }

  async listNodesPage(options: PageOptions): Promise<Page<NodeLike>> {
    this.fail("nodes");
    this.pageCalls.nodes++;
    return this.page(this.data.nodes ?? [], options);
  }
}

export function gpuNode(name: string, extra: Partial<NodeLike> = {}): NodeLike {
  return {
    metadata: { name, labels: { "kubernetes.io/hostname": name, "nvidia.com/gpu.present": "true" } },
    spec: {
      providerID: `aws:///us-west-2a/i-0${name.length}abc`,
      taints: [{ key: "nvidia.com/gpu", effect: "NoSchedule" }],
    },
    status: {
      nodeInfo: {
        containerRuntimeVersion: "containerd://1.7.24",
        kubeletVersion: "v1.31.4-eks-aeac579",
        kernelVersion: "6.1.119-129.201.amzn2023.x86_64",
        operatingSystem: "linux",
        osImage: "Amazon Linux 2023.6.20241212",
      },
    },
    ...extra,
  };
}

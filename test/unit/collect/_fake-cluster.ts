import type {
  ClusterReader,
  Page,
  PageOptions,
  ServerVersionInfo,
} from "../../../src/collect/_k8s-source.ts";
import type { ClusterPolicy, Json, V1Node, V1Pod } from "../../../src/kube/types.ts";

type Node = Json<V1Node>;
type Pod = Json<V1Pod>;

/** An in-memory ClusterReader that pages like the apiserver (limit + opaque continue token). */
export class FakeCluster implements ClusterReader {
  pageCalls = { pods: 0, nodes: 0 };
  failures: Partial<Record<"server" | "pods" | "node" | "policies" | "nodes", Error>> = {};

  constructor(
    readonly data: {
      version?: ServerVersionInfo;
      pods?: Pod[];
      nodes?: Node[];
      policies?: ClusterPolicy[];
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

  async listPodsPage(options: PageOptions): Promise<Page<Pod>> {
    this.fail("pods");
    this.pageCalls.pods++;
    return this.page(this.data.pods ?? [], options);
  }

  async getNode(name: string): Promise<Node> {
    this.fail("node");
    const node = (this.data.nodes ?? []).find((n) => n.metadata?.name === name);
    if (!node) throw new Error(`nodes "${name}" not found`);
    return node;
  }

  async listClusterPolicies(): Promise<ClusterPolicy[]> {
    this.fail("policies");
    return this.data.policies ?? [];
  }

  async listNodesPage(options: PageOptions): Promise<Page<Node>> {
    this.fail("nodes");
    this.pageCalls.nodes++;
    return this.page(this.data.nodes ?? [], options);
  }
}

export function gpuNode(name: string, extra: Partial<Node> = {}): Node {
  return {
    metadata: { name, labels: { "kubernetes.io/hostname": name, "nvidia.com/gpu.present": "true" } },
    spec: {
      providerID: `aws:///us-west-2a/i-0${name.length}abc`,
      taints: [{ key: "nvidia.com/gpu", effect: "NoSchedule" }],
    },
    status: {
      nodeInfo: {
        architecture: "amd64",
        bootID: "b0e7c1d2-0000-4000-8000-000000000001",
        containerRuntimeVersion: "containerd://1.7.24",
        kubeletVersion: "v1.31.4-eks-aeac579",
        kubeProxyVersion: "",
        kernelVersion: "6.1.119-129.201.amzn2023.x86_64",
        machineID: "ec2f0000000000000000000000000001",
        operatingSystem: "linux",
        osImage: "Amazon Linux 2023.6.20241212",
        systemUUID: "ec2f0000-0000-0000-0000-000000000001",
      },
    },
    ...extra,
  };
}

/**
 * The one catalog of what the snapshot agent may do. The run-scoped Role and ClusterRole, the
 * rendered manifests for an existing ServiceAccount, and the permission gate all read it, so they
 * cannot drift apart.
 */

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

export interface CatalogRule extends PolicyRule {
  /** Why the agent needs it, one line; rendered into manifest headers. */
  reason: string;
}

/** Granted in the deployment namespace by the Role. */
export const NAMESPACED_RULES: readonly CatalogRule[] = [
  {
    apiGroups: [""],
    resources: ["configmaps"],
    verbs: ["create", "get", "update", "patch"],
    reason: "write the snapshot ConfigMap that the CLI reads back (server-side apply)",
  },
  {
    apiGroups: [""],
    resources: ["pods"],
    verbs: ["get", "list"],
    reason: "find the agent's own pod for provenance",
  },
];

/** Granted cluster-wide by the ClusterRole on every run: read-only. */
export const CLUSTER_BASELINE_RULES: readonly CatalogRule[] = [
  {
    apiGroups: [""],
    resources: ["nodes"],
    verbs: ["get", "list"],
    reason: "read this node and the node topology (labels, taints)",
  },
  {
    apiGroups: [""],
    resources: ["pods"],
    verbs: ["get", "list"],
    reason: "list container images running in every namespace",
  },
  {
    apiGroups: ["nvidia.com"],
    resources: ["clusterpolicies"],
    verbs: ["get", "list"],
    reason: "read the GPU Operator ClusterPolicy spec",
  },
  {
    apiGroups: ["slinky.slurm.net"],
    resources: ["controllers", "nodesets", "loginsets", "restapis", "accountings"],
    verbs: ["list"],
    reason: "detect a Slinky (Slurm on Kubernetes) deployment",
  },
  {
    apiGroups: ["k8s.mariadb.com"],
    resources: ["mariadbs"],
    verbs: ["list"],
    reason: "detect the MariaDB that Slinky accounting uses",
  },
  {
    apiGroups: ["apps"],
    resources: ["daemonsets"],
    verbs: ["get", "list"],
    reason: "find device-plugin DaemonSets (evidence of a legacy GPU stack, e.g. on OKE)",
  },
];

/** Added to the ClusterRole only with --discover-network: these change the cluster. */
export const DISCOVER_NETWORK_RULES: readonly CatalogRule[] = [
  {
    apiGroups: ["apiextensions.k8s.io"],
    resources: ["customresourcedefinitions"],
    verbs: ["get", "list", "create", "update", "patch"],
    reason: "install the NIC configuration operator CRDs (NicDevice, NicClusterPolicy)",
  },
  {
    apiGroups: [""],
    resources: ["namespaces"],
    verbs: ["get", "create", "delete"],
    reason: "create and remove the discovery namespace nvidia-k8s-launch-kit",
  },
  {
    apiGroups: ["apps"],
    resources: ["daemonsets"],
    verbs: ["get", "list", "watch", "create", "delete"],
    reason: "run the NIC configuration daemon on every node",
  },
  {
    apiGroups: [""],
    resources: ["serviceaccounts", "configmaps"],
    verbs: ["get", "create", "delete"],
    reason: "create the discovery daemon's ServiceAccount and configuration",
  },
  {
    apiGroups: ["rbac.authorization.k8s.io"],
    resources: ["roles", "rolebindings"],
    verbs: ["get", "create", "delete"],
    reason: "grant the discovery daemon its own permissions",
  },
  {
    apiGroups: [""],
    resources: ["pods/exec"],
    verbs: ["create"],
    reason: "read NIC VPD and link data inside the daemon's pods",
  },
  {
    apiGroups: [""],
    resources: ["nodes"],
    verbs: ["patch"],
    reason: "label nodes with nvidia.kubernetes-launch-kit.machine / .gpu",
  },
  {
    apiGroups: ["configuration.net.nvidia.com"],
    resources: ["nicdevices"],
    verbs: ["get", "list"],
    reason: "read the NicDevice objects the daemon reports",
  },
  {
    apiGroups: ["mellanox.com"],
    resources: ["nicclusterpolicies"],
    verbs: ["get", "patch"],
    reason: "apply the NIC configuration operator section of the NicClusterPolicy",
  },
];

const READ_VERBS = new Set(["get", "list", "watch"]);

export function isMutating(rule: PolicyRule): boolean {
  return rule.verbs.some((verb) => !READ_VERBS.has(verb));
}

export function clusterRules(options: { discoverNetwork: boolean }): readonly CatalogRule[] {
  return options.discoverNetwork
    ? [...CLUSTER_BASELINE_RULES, ...DISCOVER_NETWORK_RULES]
    : CLUSTER_BASELINE_RULES;
}

/** The rule as Kubernetes stores it (fresh arrays, no reason). */
export function toPolicyRule(rule: PolicyRule): PolicyRule {
  return { apiGroups: [...rule.apiGroups], resources: [...rule.resources], verbs: [...rule.verbs] };
}

/** `create pods/exec` style text for headers and messages; the core group is written as "". */
export function describeRule(rule: PolicyRule): string {
  const groups = rule.apiGroups.map((g) => (g === "" ? '""' : g)).join(",");
  return `${rule.verbs.join(",")} ${rule.resources.join(",")} (apiGroups ${groups})`;
}

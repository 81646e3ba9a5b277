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

/**
 * Added to the ClusterRole only with --discover-network: read-only. The original granted nine rules
 * here, eight of them mutating (CRDs, a namespace, a DaemonSet, pods/exec, node labels, the
 * NicClusterPolicy), because it ran k8s-launch-kit's live discovery: it installed the NIC
 * configuration daemon on every node and exec'd into its pods. aicr's agent already runs privileged
 * on the node it describes and reads the NICs from sysfs, so it needs none of that: it only reads
 * the NIC operators' objects when they exist. Finding their API groups is discovery (/apis), which
 * every authenticated user may read (system:discovery), so it needs no rule. The original's set is
 * kept, unchanged, where cleanup-legacy recognises old ClusterRoles (legacy/_rule-subset.ts).
 */
export const DISCOVER_NETWORK_RULES: readonly CatalogRule[] = [
  {
    apiGroups: ["configuration.net.nvidia.com"],
    resources: ["nicdevices"],
    verbs: ["get", "list"],
    reason:
      "read the NicDevice objects of the NIC configuration operator, when installed (NetworkTopology nic-devices)",
  },
  {
    apiGroups: ["mellanox.com"],
    resources: ["nicclusterpolicies"],
    verbs: ["get", "list"],
    reason:
      "read the Network Operator's NicClusterPolicy, when installed (NetworkTopology nic-cluster-policy); never patched",
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

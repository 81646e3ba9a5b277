/**
 * The conformance suites' real test cluster (test/cluster/standins/_cluster.ts) with the checks' own
 * image (CHECK_IMAGE) run as dist/aicr — `aicr probe sleep …`, `aicr probe devices` — and what the
 * suites read of it: the objects a check may have left, and a client acting as the check's identity.
 */
import { KubeClient } from "../../../src/kube/client.ts";
import { findValidator } from "../../../src/validate/_catalog.ts";
import type { Recipe } from "../../../src/validate/recipe.ts";
import { node } from "../../cluster/nodes.ts";
import type { KObject } from "../../cluster/objects.ts";
import { standinClusterOptions } from "../../cluster/standins/_cluster.ts";
import { adminClient } from "../../cluster/standins/_host.ts";
import type { GpuLeak } from "../../cluster/standins/gpu-access.ts";
import { startTestCluster, type TestCluster } from "../../cluster/testbed.ts";
import { AICR, ensureBuilt } from "../../e2e/_aicr.ts";
import { until } from "../../support/until.ts";
import { CHECK_IMAGE } from "./_context.ts";

/** The DRA checks' nodes: gpu-node-1 and gpu-node-2 with 2 GPUs each, and cpu-node-1. */
export const draNodes = (): KObject[] => [
  node("gpu-node-1", { gpus: 2 }),
  node("gpu-node-2", { gpus: 2 }),
  node("cpu-node-1"),
];

/** A real cluster of these nodes for the stand-ins, CHECK_IMAGE's pods running dist/aicr (built first). */
export async function standinCluster(nodes: KObject[], leak?: GpuLeak): Promise<TestCluster> {
  await ensureBuilt();
  return startTestCluster(
    "real",
    standinClusterOptions({ nodes, images: { [CHECK_IMAGE]: AICR }, ...(leak ? { leak } : {}) }),
  );
}

/** Names of the objects in `namespace` of these kinds (what a check may have left behind). */
export async function objectsIn(
  cluster: TestCluster,
  namespace: string,
  kinds: { apiVersion: string; kind: string }[],
): Promise<string[]> {
  const client = adminClient(cluster);
  try {
    const out: string[] = [];
    for (const k of kinds)
      for (const o of (
        await client.list<{ metadata?: { name?: string } }>(k.apiVersion, k.kind, { namespace })
      ).items)
        out.push(`${k.kind}/${o.metadata?.name}`);
    return out.sort();
  } finally {
    client.close();
  }
}

/** What the autoscaling checks make (_autoscaling.ts): a Deployment and its HPA, ReplicaSets, pods. */
export const AUTOSCALING_KINDS = [
  { apiVersion: "apps/v1", kind: "Deployment" },
  { apiVersion: "apps/v1", kind: "ReplicaSet" },
  { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler" },
  { apiVersion: "v1", kind: "Pod" },
];

/** Waits until `namespace` holds none of these kinds (a check's pods end a moment after their owner). */
export const untilNothingIn = (
  cluster: TestCluster,
  namespace: string,
  kinds: { apiVersion: string; kind: string }[],
): Promise<boolean> =>
  until(
    async () => (await objectsIn(cluster, namespace, kinds)).length === 0,
    `nothing left in ${namespace}`,
    {
      ms: 60_000,
      everyMs: 250,
      accept: (empty) => empty,
    },
  );

/**
 * A client acting as the check's own identity, with exactly the catalog's rules (_catalog.ts): a
 * ServiceAccount in `testNamespace`, a ClusterRole of its clusterRules and a Role of its
 * namespaceRules there, both bound. The caller's test namespace holds them, so they go with it.
 */
export async function checkIdentity(
  cluster: TestCluster,
  check: string,
  recipe: Recipe,
  testNamespace: string,
  /** Rules beyond the catalog's (a change asked of _catalog.ts, named where it is used). */
  extraClusterRules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] = [],
): Promise<{ client: KubeClient; remove: () => Promise<void> }> {
  const entry = findValidator(check);
  if (!entry) throw new Error(`no catalog entry ${check}`);
  const admin = adminClient(cluster);
  const name = `${check}-identity`;
  const clusterRoleName = `${name}-${testNamespace}`.slice(0, 253);
  const subject = { kind: "ServiceAccount", name, namespace: testNamespace };
  await admin.create({
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name, namespace: testNamespace },
  });
  await admin.create({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: clusterRoleName },
    rules: [...(entry.clusterRules?.(recipe) ?? []), ...extraClusterRules],
  });
  await admin.create({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: clusterRoleName },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: clusterRoleName },
    subjects: [subject],
  });
  await admin.create({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name, namespace: testNamespace },
    rules: entry.namespaceRules ?? [],
  });
  await admin.create({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name, namespace: testNamespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
    subjects: [subject],
  });
  const client = KubeClient.connect({
    kubeconfig: cluster.kubeconfigFor(`system:serviceaccount:${testNamespace}:${name}`),
    env: {},
  });
  return {
    client,
    remove: async () => {
      client.close();
      for (const kind of ["ClusterRoleBinding", "ClusterRole"])
        await admin
          .delete({ apiVersion: "rbac.authorization.k8s.io/v1", kind, name: clusterRoleName })
          .catch(() => {});
      for (const [apiVersion, kind] of [
        ["rbac.authorization.k8s.io/v1", "RoleBinding"],
        ["rbac.authorization.k8s.io/v1", "Role"],
        ["v1", "ServiceAccount"],
      ] as const)
        await admin.delete({ apiVersion, kind, name, namespace: testNamespace }).catch(() => {});
      admin.close();
    },
  };
}

/**
 * A real test cluster for the checks whose stand-ins run workloads (test/cluster/standins): the process
 * kubelet runs the check's own image (CHECK_IMAGE) as dist/aicr — `aicr probe sleep …` — and every
 * other image (an operator's, an exporter's) as a container that runs until its pod is deleted.
 */
import { KubeClient } from "../../../src/kube/client.ts";
import { findValidator } from "../../../src/validate/_catalog.ts";
import type { Recipe } from "../../../src/validate/recipe.ts";
import { processRuntime } from "../../cluster/controllers/process-runtime.ts";
import type { KObject } from "../../cluster/objects.ts";
import { runUntilStopped } from "../../cluster/standins/_host.ts";
import { startTestCluster, type TestCluster } from "../../cluster/testbed.ts";
import { AICR, ensureBuilt } from "../../e2e/_aicr.ts";
import { CHECK_IMAGE } from "./_context.ts";

export async function standinCluster(nodes: KObject[]): Promise<TestCluster> {
  await ensureBuilt();
  return startTestCluster("real", {
    nodes,
    runtime: (api) =>
      processRuntime({
        images: { [CHECK_IMAGE]: AICR },
        kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
        baseEnv: { PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1" },
        fallback: runUntilStopped,
      }),
  });
}

/** Names of the objects in `namespace` of these kinds (what a check may have left behind). */
export async function objectsIn(
  cluster: TestCluster,
  namespace: string,
  kinds: { apiVersion: string; kind: string }[],
): Promise<string[]> {
  const client = KubeClient.connect({ kubeconfig: cluster.kubeconfigFor("admin"), env: {} });
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
  const admin = KubeClient.connect({ kubeconfig: cluster.kubeconfigFor("admin"), env: {} });
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

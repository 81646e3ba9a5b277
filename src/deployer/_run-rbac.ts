import type { KubeObject, KubernetesObject } from "../kube/client.ts";
import {
  buildAgentClusterRole,
  buildAgentClusterRoleBinding,
  buildAgentRole,
  buildAgentRoleBinding,
  buildAgentServiceAccount,
  type OwnerRef,
} from "../rbac/objects.ts";
import { createAllBindingsLast, settleAll } from "../run/create-owned.ts";
import type { RunNames } from "../run/names.ts";

export interface RunRbac {
  /** The anchor ClusterRole: every other run object is owned by it. */
  owner: OwnerRef;
  serviceAccountName: string;
  /** The ServiceAccount create's resourceVersion: answered before any Job, so the run's waits may start there. */
  watchFrom: string | undefined;
}

/**
 * The run's own RBAC (prefix mode), one run or a fleet alike: the anchor ClusterRole first, alongside
 * the namespace ensure (cluster-scoped, so it need not wait for it), then its binding, the
 * ServiceAccount, the Role and the RoleBinding, each owned by the anchor. The RoleBinding goes with
 * its Role only when the caller may bind any Role (`mayBind`); otherwise the apiserver reads the Role
 * to check the binding, so the binding waits for it.
 */
export async function createRunRbac(
  create: (o: KubernetesObject) => Promise<KubeObject>,
  meta: { names: RunNames; namespace: string; labels: Record<string, string> },
  o: { discoverNetwork: boolean; mayBind: boolean; namespaceReady: Promise<unknown> },
): Promise<RunRbac> {
  const anchorCreate = create(buildAgentClusterRole({ ...meta, discoverNetwork: o.discoverNetwork }));
  await settleAll([anchorCreate, o.namespaceReady]);
  const anchor = await anchorCreate;
  const owner: OwnerRef = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    name: meta.names.clusterRole,
    uid: anchor.metadata?.uid ?? "",
  };
  const withOwner = { ...meta, owner };
  const serviceAccount = create(buildAgentServiceAccount(withOwner));
  await settleAll([
    create(buildAgentClusterRoleBinding(withOwner)),
    serviceAccount,
    ...createAllBindingsLast(
      [buildAgentRole(withOwner), buildAgentRoleBinding(withOwner)],
      create,
      o.mayBind,
    ),
  ]);
  return {
    owner,
    serviceAccountName: meta.names.serviceAccount,
    watchFrom: (await serviceAccount).metadata?.resourceVersion,
  };
}

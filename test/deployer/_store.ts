import { stagingConfigMapName } from "../../src/run/names.ts";
import { type KObject, resource } from "../cluster/store.ts";
import type { TestCluster as Cluster } from "../cluster/testbed.ts";
import { untilStore } from "../support/until.ts";

const NAMESPACED = ["serviceaccounts", "roles", "rolebindings", "jobs", "pods", "configmaps"];
const CLUSTER = ["clusterroles", "clusterrolebindings"];

/** "Kind/name uid" of every object carrying the run's label, plus its staging ConfigMap (which carries none). */
export function runObjects(cluster: Cluster, namespace: string, runId: string): string[] {
  const selector = `aicr.run/run-id=${runId}`;
  const out: string[] = [];
  const add = (o: KObject) => out.push(`${o.kind}/${o.metadata.name} ${o.metadata.uid}`);
  for (const plural of NAMESPACED)
    for (const o of cluster.store.list(resource(plural), { namespace, labelSelector: selector }).items)
      add(o);
  for (const plural of CLUSTER)
    for (const o of cluster.store.list(resource(plural), { labelSelector: selector }).items) add(o);
  const staging = cluster.store.find(resource("configmaps"), namespace, stagingConfigMapName(runId));
  if (staging) add(staging);
  return out.sort();
}

/** No object of the run is left (the real backend's mirror learns of a delete a moment after it). */
export const untilRunGone = (cluster: Cluster, namespace: string, runId: string) =>
  untilStore(
    cluster,
    () => runObjects(cluster, namespace, runId).length === 0,
    () =>
      `no object of run ${runId} left in ${namespace}; left: ${runObjects(cluster, namespace, runId).join(", ")}`,
  );

export function find(cluster: Cluster, plural: string, namespace: string | undefined, name: string) {
  return cluster.store.find(resource(plural), namespace, name);
}

/** The namespace, created directly if no earlier test (in any order) made it. */
export async function haveNamespace(cluster: Cluster, name: string): Promise<void> {
  if (!cluster.store.find(resource("namespaces"), undefined, name))
    await cluster.store.create(resource("namespaces"), {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name },
    });
}

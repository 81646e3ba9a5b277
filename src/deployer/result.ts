import { AicrError } from "../core/errors.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
import { isNotFound } from "../kube/errors.ts";
import { type CreatedSet, ownerUids } from "../run/created-set.ts";

export const SNAPSHOT_KEY = "snapshot.yaml";

export type ResultConfigMap = KubeObject & { data?: Record<string, string> };

/**
 * The agent's result: the ConfigMap it wrote, bytes unchanged. When the run owns that ConfigMap (the
 * staging copy) its UID is recorded here, since the pod created it and the remote side never saw a create.
 */
export async function readSnapshotConfigMap(
  client: KubeClient,
  o: {
    namespace: string;
    name: string;
    owned: boolean;
    created: CreatedSet;
    seen?: ResultConfigMap | undefined;
  },
): Promise<string> {
  const ref = { apiVersion: "v1", kind: "ConfigMap", name: o.name, namespace: o.namespace };
  let cm: ResultConfigMap;
  try {
    cm = o.seen ?? (await client.get(ref));
  } catch (err) {
    if (!isNotFound(err)) throw err;
    throw new AicrError(
      "NOT_FOUND",
      `the agent finished but ConfigMap ${o.namespace}/${o.name} does not exist`,
      {
        remedy: "check the agent's log above for the error that kept it from writing its snapshot",
        cause: err,
      },
    );
  }
  if (o.owned && cm.metadata?.uid) o.created.confirm(ref, cm.metadata.uid, ownerUids(cm));
  const content = cm.data?.[SNAPSHOT_KEY];
  if (content === undefined) {
    throw new AicrError(
      "NOT_FOUND",
      `ConfigMap ${o.namespace}/${o.name} has no ${JSON.stringify(SNAPSHOT_KEY)} key`,
      {
        remedy: "the agent image may be of a different version; check its log and the ConfigMap's keys",
        context: { keys: Object.keys(cm.data ?? {}).join(",") },
      },
    );
  }
  return content;
}

import { AicrError } from "../core/errors.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
import { isNotFound } from "../kube/errors.ts";
import { type CreatedSet, ownerUids } from "../run/created-set.ts";

export const SNAPSHOT_KEY = "snapshot.yaml";

export type ResultConfigMap = KubeObject & { data?: Record<string, string> };

export interface ResultRef {
  namespace: string;
  name: string;
}

const configMapRef = (o: ResultRef) => ({ apiVersion: "v1", kind: "ConfigMap", ...o });

/** The output ConfigMap, read now (a quorum read); NOT_FOUND says the agent wrote nothing there. */
export async function readResultConfigMap(client: KubeClient, o: ResultRef): Promise<ResultConfigMap> {
  try {
    return await client.get(configMapRef(o));
  } catch (err) {
    if (!isNotFound(err)) throw err;
    throw new AicrError(
      "NOT_FOUND",
      `the agent finished but ConfigMap ${o.namespace}/${o.name} does not exist`,
      {
        remedy: "check the agent's log for the error that kept it from writing its snapshot",
        cause: err,
      },
    );
  }
}

/** The agent's document in the ConfigMap, bytes unchanged. */
export function resultContent(cm: ResultConfigMap, o: ResultRef): string {
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

/**
 * A result ConfigMap the run owns (its staging copy: the pod created it, the remote side never saw a
 * create) is journalled with its UID, so cleanup deletes exactly it. `owner`: only when that Job is
 * among its owners.
 */
export function confirmResult(
  created: CreatedSet,
  cm: ResultConfigMap,
  o: ResultRef & { owner?: string },
): void {
  const owners = ownerUids(cm);
  if (!cm.metadata?.uid || (o.owner && !owners?.includes(o.owner))) return;
  created.confirm(configMapRef(o), cm.metadata.uid, owners);
}

/** The agent's result: the ConfigMap it wrote (seen, or read now), recorded when owned; its bytes. */
export async function readSnapshotConfigMap(
  client: KubeClient,
  o: ResultRef & { owned: boolean; created: CreatedSet; seen?: ResultConfigMap | undefined },
): Promise<string> {
  const cm = o.seen ?? (await readResultConfigMap(client, o));
  if (o.owned) confirmResult(o.created, cm, o);
  return resultContent(cm, o);
}

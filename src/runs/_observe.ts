/** Reads a scope's run objects with list calls only (by label), every page. */
import { LABEL } from "../core/labels.ts";
import type { KubeClient } from "../kube/client.ts";
import { RUN_KINDS, type RunKind } from "./_kinds.ts";
import type { Listed } from "./_summary.ts";
import type { RunsScope } from "./types.ts";

const PAGE = 500;

async function listAll(client: KubeClient, kind: RunKind, namespace: string | undefined, selector: string) {
  const items: Listed[] = [];
  let continueToken: string | undefined;
  do {
    const page = await client.list<Listed>(kind.apiVersion, kind.kind, {
      namespace,
      labelSelector: selector,
      limit: PAGE,
      continueToken,
    });
    // A list's items carry no apiVersion/kind of their own: the list call says what they are.
    for (const item of page.items) items.push({ ...item, apiVersion: kind.apiVersion, kind: kind.kind });
    continueToken = page.continueToken;
  } while (continueToken);
  return items;
}

/**
 * The run objects in scope: cluster-scoped kinds cluster-wide, namespaced kinds in the namespace (or
 * every namespace), one wave of lists. `runId` narrows the selector to one run.
 */
export async function readRunObjects(
  client: KubeClient,
  scope: RunsScope,
  runId?: string,
): Promise<Listed[]> {
  const selector = runId ? `${LABEL.runId}=${runId}` : LABEL.runId;
  const namespace = scope.allNamespaces ? undefined : scope.namespace;
  const lists = await Promise.all(
    RUN_KINDS.map((k) => listAll(client, k, k.namespaced ? namespace : undefined, selector)),
  );
  return lists.flat();
}

import { AicrError } from "../core/errors.ts";
import { LABEL, LABEL_VALUE } from "../core/labels.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
import { isAlreadyExists, isForbidden, isNotFound } from "../kube/errors.ts";

/**
 * The namespace is ensured, never owned: created if absent (with a WARN naming it and the command
 * that removes it, so a typo is seen at once), never deleted. An existing namespace keeps its labels:
 * managed-by=aicr is added only when it has no managed-by label at all, never written over another
 * tool's (Helm's, say). Read first: the common case (it exists) costs one request, sent alongside
 * the anchor's create. An operator without namespace rights can still run in one that exists.
 */
export async function ensureNamespace(
  client: KubeClient,
  options: {
    namespace: string;
    log: Logger;
    signal?: AbortSignal | undefined;
    /** The namespace as this invocation just read it (the gate does): not read again. */
    known?: KubeObject | undefined;
  },
): Promise<void> {
  const ref = { apiVersion: "v1", kind: "Namespace", name: options.namespace };
  const labels = { [LABEL.managedBy]: LABEL_VALUE.app };
  let live = options.known;
  if (!live) {
    try {
      live = await client.get<KubeObject>(ref);
    } catch (err) {
      if (!isNotFound(err) && !isForbidden(err)) throw err;
    }
  }
  if (!live) {
    if (options.signal?.aborted) throw options.signal.reason;
    try {
      await client.create({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: options.namespace, labels },
      });
      options.log.warn(
        `created namespace ${options.namespace}: it did not exist, and aicr never deletes it; if the name is a typo, remove it with: kubectl delete namespace ${options.namespace}`,
      );
      return;
    } catch (err) {
      if (isForbidden(err)) {
        throw new AicrError(
          "UNAUTHORIZED",
          `namespace ${JSON.stringify(options.namespace)} cannot be created or read by the caller`,
          {
            remedy: "create the namespace first, or ask for create/get on namespaces",
            cause: err,
          },
        );
      }
      if (!isAlreadyExists(err)) throw err;
      return; // created meanwhile by someone else: it exists, which is all a run needs
    }
  }
  // Another tool's managed-by (Helm, Argo CD, …) is theirs: only an absent label is added.
  if (live.metadata?.labels?.[LABEL.managedBy] !== undefined) return;
  // The resourceVersion read makes the patch conditional: a label set meanwhile is not written over.
  const resourceVersion = live.metadata?.resourceVersion;
  const patch = { metadata: { ...(resourceVersion ? { resourceVersion } : {}), labels } };
  await client.mergePatch(ref, patch).catch((patchErr: unknown) => {
    options.log.warn(`could not label namespace ${options.namespace} managed-by=aicr; continuing`, {
      cause: (patchErr as Error).message,
    });
  });
}

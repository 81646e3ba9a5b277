import { AicrError } from "../core/errors.ts";
import { LABEL, LABEL_VALUE } from "../core/labels.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
import { isAlreadyExists, isForbidden, isNotFound } from "../kube/errors.ts";

/**
 * The namespace is ensured, never owned: labelled managed-by=aicr if it exists without it, created if
 * absent, never deleted. Read first: the common case (it exists) costs one request, sent alongside
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
      options.log.info(`created namespace ${options.namespace} (it is never deleted by aicr)`);
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
  if (live.metadata?.labels?.[LABEL.managedBy] === LABEL_VALUE.app) return;
  await client.mergePatch(ref, { metadata: { labels } }).catch((patchErr: unknown) => {
    options.log.warn(`could not label namespace ${options.namespace} managed-by=aicr; continuing`, {
      cause: (patchErr as Error).message,
    });
  });
}

import { AicrError } from "../core/errors.ts";
import type { KubeClient } from "../kube/client.ts";
import { isForbidden, isNotFound } from "../kube/errors.ts";

/** prefix: the run creates its own ServiceAccount and RBAC; exact: it runs as an existing one and grants nothing. */
export type ServiceAccountMode =
  | { kind: "prefix"; prefix: string | undefined }
  | { kind: "exact"; name: string };

/**
 * Exact-if-exists: a named ServiceAccount that exists is used verbatim (IRSA and Workload Identity pin
 * trust to its name); one that does not is a prefix; an unset name is never probed.
 */
export async function resolveServiceAccountMode(
  client: KubeClient,
  options: { namespace: string; name: string | undefined },
): Promise<ServiceAccountMode> {
  if (!options.name) return { kind: "prefix", prefix: undefined };
  try {
    await client.get({
      apiVersion: "v1",
      kind: "ServiceAccount",
      name: options.name,
      namespace: options.namespace,
    });
    return { kind: "exact", name: options.name };
  } catch (err) {
    if (isNotFound(err)) return { kind: "prefix", prefix: options.name };
    if (isForbidden(err)) {
      throw new AicrError(
        "UNAUTHORIZED",
        `cannot tell whether ServiceAccount ${options.namespace}/${options.name} exists (get serviceaccounts is forbidden); refusing to guess`,
        {
          remedy: `grant the caller get on serviceaccounts in ${options.namespace}: guessing "prefix" would run the agent without that ServiceAccount's cloud identity`,
          cause: err,
        },
      );
    }
    throw err;
  }
}

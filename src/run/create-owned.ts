import { retry } from "../core/async.ts";
import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import {
  describe,
  type KubeClient,
  type KubeObject,
  type KubernetesObject,
  type ObjectRef,
  refOf,
} from "../kube/client.ts";
import { isAlreadyExists, isTransient, KubeStatusError } from "../kube/errors.ts";
import { type CreatedSet, ownerUids } from "./created-set.ts";
import { carriesInvocationLabels, type RunIdentity } from "./labels.ts";

export const CREATE_ATTEMPTS = 4;
const BASE_DELAY_MS = 250;
const MAX_DELAY_MS = 5000;

export interface CreateOwnedOptions {
  client: KubeClient;
  created: CreatedSet;
  identity: RunIdentity;
  log: Logger;
  signal: AbortSignal;
}

/** The pause after failed attempt `attempt` (from 1): the server's Retry-After when it sent one. */
function backoff(attempt: number, err: unknown): number {
  const retryAfter = err instanceof KubeStatusError ? err.retryAfterSeconds : undefined;
  if (retryAfter !== undefined) return Math.min(retryAfter * 1000, MAX_DELAY_MS);
  return Math.min(BASE_DELAY_MS * 2 ** (attempt - 1), MAX_DELAY_MS);
}

/**
 * Creates a run-owned object: intent recorded first, transient failures retried, and an
 * AlreadyExists adopted only when the object there carries this invocation's labels (our own create
 * whose response was lost); anything else at the name means a duplicate run ID, and fails.
 */
export async function createOwned<T extends KubernetesObject>(
  object: T,
  o: CreateOwnedOptions,
): Promise<KubeObject> {
  const ref = refOf(object);
  o.created.recordIntent(ref, ownerUids(object));
  // A cancelled run starts no new create (one in flight still settles, so cleanup sees it); a failure
  // that is not retried keeps the intent: cleanup will resolve it.
  return retry(
    async () => {
      let made: KubernetesObject;
      try {
        made = await o.client.create(object);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        // If what stands there cannot be read, neither ours nor foreign is proven: the intent stays
        // (cleanup resolves it) and a transient failure is retried like the create itself.
        const live = await o.client.get<KubeObject>(ref);
        return adopt(ref, o, live, err);
      }
      o.created.confirm(ref, made.metadata?.uid ?? "");
      return made as KubeObject;
    },
    {
      attempts: CREATE_ATTEMPTS,
      retryable: isTransient,
      backoffMs: backoff,
      signal: o.signal,
      onRetry: (attempt, err) =>
        o.log.warn(`creating ${describe(ref)} failed transiently; retrying`, {
          attempt,
          cause: (err as Error).message,
        }),
    },
  );
}

function adopt(ref: ObjectRef, o: CreateOwnedOptions, live: KubeObject, cause: unknown): KubeObject {
  const uid = live.metadata?.uid;
  if (uid && carriesInvocationLabels(live.metadata?.labels, o.identity)) {
    o.created.confirm(ref, uid, undefined, { adopted: true });
    o.log.debug(`adopted ${describe(ref)}: our own create whose response was lost`, { uid });
    return live;
  }
  o.created.discard(ref);
  throw new AicrError(
    "INTERNAL",
    `${describe(ref)} already exists under this run's name and was not created by this invocation (duplicate run ID ${o.identity.runId}?)`,
    {
      remedy:
        "another invocation is using the same run ID; omit --run-id / AICR_RUN_ID so each run gets its own",
      context: { kind: ref.kind, name: ref.name, runId: o.identity.runId },
      cause,
    },
  );
}

/**
 * Like Promise.all, but rejects only once every create has settled: cleanup runs right after a failed
 * deploy, and a create still in flight then would land after cleanup looked (and be left to the GC).
 */
/**
 * Creates a set of objects concurrently, except that each RoleBinding waits for the Roles of the set:
 * for a caller who may not `bind` a Role, kube-apiserver checks the binding against the Role's rules,
 * which it reads — a Role still in flight makes the binding a 404. `mayBind` (a cluster-admin) lifts it.
 */
export function createAllBindingsLast(
  objects: KubernetesObject[],
  create: (o: KubernetesObject) => Promise<unknown>,
  mayBind: boolean,
): Promise<unknown>[] {
  if (mayBind) return objects.map(create);
  const isBinding = (o: KubernetesObject) => o.kind === "RoleBinding";
  const first = objects.filter((o) => !isBinding(o)).map((o) => [o, create(o)] as const);
  const roles = first.filter(([o]) => o.kind === "Role").map(([, p]) => p);
  const bindings = objects.filter(isBinding).map((o) => settleAll(roles).then(() => create(o)));
  return [...first.map(([, p]) => p), ...bindings];
}

export async function settleAll(creates: Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(creates);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
}

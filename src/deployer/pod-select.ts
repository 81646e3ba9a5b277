import type { Json, V1Pod } from "../kube/types.ts";

/** A pod as the API's JSON carries it: creationTimestamp and deletionTimestamp are strings. */
type Pod = Json<V1Pod>;

/**
 * The only proof that a pod belongs to this run: a controller ownerReference of kind Job carrying the
 * Job UID the create returned. Labels (controller-uid included) can be forged by anyone who can update pods.
 */
export function ownedByJob(pod: Pod, jobUid: string | undefined): boolean {
  if (!jobUid) return false;
  return (pod.metadata?.ownerReferences ?? []).some(
    (r) => r.kind === "Job" && r.uid === jobUid && r.controller === true,
  );
}

const created = (p: Pod): number => new Date(p.metadata?.creationTimestamp ?? 0).getTime();

/** The youngest owned pod that is not being deleted (and, unless asked, not Failed). */
export function pickOwnedPod<T extends Pod>(
  pods: readonly T[],
  jobUid: string,
  options: { includeFailed?: boolean } = {},
): T | undefined {
  const candidates = pods.filter(
    (p) =>
      ownedByJob(p, jobUid) &&
      !p.metadata?.deletionTimestamp &&
      (options.includeFailed || p.status?.phase !== "Failed"),
  );
  return candidates.reduce<T | undefined>(
    (best, p) => (best === undefined || created(p) > created(best) ? p : best),
    undefined,
  );
}

/** The apiserver half of deletion: preconditions, propagation policy finalizers, deletionTimestamp. */
import {
  clone,
  type DeleteOptions,
  FINALIZER_FOREGROUND,
  FINALIZER_ORPHAN,
  type KObject,
  type PropagationPolicy,
} from "./objects.ts";
import type { ResourceType } from "./resources.ts";

export function preconditionFailure(live: KObject, opts: DeleteOptions): string | undefined {
  const p = opts.preconditions;
  if (p?.uid && p.uid !== live.metadata.uid) {
    return `the UID in the precondition (${p.uid}) does not match the UID in record (${live.metadata.uid}). The object might have been deleted and then recreated`;
  }
  if (p?.resourceVersion && p.resourceVersion !== live.metadata.resourceVersion) {
    return `the ResourceVersion in the precondition (${p.resourceVersion}) does not match the ResourceVersion in record (${live.metadata.resourceVersion}). The object might have been modified`;
  }
  return undefined;
}

/** batch/v1 Jobs keep their historical default: orphan the pods unless told otherwise. */
export function defaultPolicy(r: ResourceType): PropagationPolicy {
  return r.group === "batch" && r.plural === "jobs" ? "Orphan" : "Background";
}

export function effectivePolicy(r: ResourceType, opts: DeleteOptions): PropagationPolicy {
  if (opts.propagationPolicy) return opts.propagationPolicy;
  if (opts.orphanDependents === true) return "Orphan";
  if (opts.orphanDependents === false) return "Background";
  return defaultPolicy(r);
}

export interface DeletePlan {
  object: KObject;
  /** Remove from storage now (no finalizers left). */
  remove: boolean;
  /** Otherwise: whether the object changed (deletionTimestamp or finalizers were added). */
  changed: boolean;
}

export function deletePlan(r: ResourceType, live: KObject, opts: DeleteOptions, now: string): DeletePlan {
  const obj = clone(live);
  const m = obj.metadata;
  const policy = effectivePolicy(r, opts);
  const finalizers = [...(m.finalizers ?? [])];
  const want =
    policy === "Orphan" ? FINALIZER_ORPHAN : policy === "Foreground" ? FINALIZER_FOREGROUND : undefined;
  let changed = false;
  if (want && !finalizers.includes(want)) {
    // Switching policy on a second delete replaces the other GC finalizer, as the apiserver does.
    const other = want === FINALIZER_ORPHAN ? FINALIZER_FOREGROUND : FINALIZER_ORPHAN;
    const i = finalizers.indexOf(other);
    if (i >= 0) finalizers.splice(i, 1);
    finalizers.push(want);
    changed = true;
  }
  if (m.deletionTimestamp) {
    if (changed) m.finalizers = finalizers;
    return { object: obj, remove: false, changed };
  }
  if (r.plural === "namespaces") {
    m.deletionTimestamp = now;
    obj.status = { ...(obj.status ?? {}), phase: "Terminating" };
    return { object: obj, remove: false, changed: true };
  }
  // Simplification: no graceful termination (pods included); without finalizers the object goes at once.
  if (finalizers.length === 0) return { object: obj, remove: true, changed: false };
  m.finalizers = finalizers;
  m.deletionTimestamp = now;
  m.deletionGracePeriodSeconds = 0;
  if (r.generation) m.generation = (m.generation ?? 1) + 1;
  return { object: obj, remove: false, changed: true };
}

/** An object marked for deletion whose last finalizer was just removed leaves storage. */
export function finishDeletionIfDone(obj: KObject): boolean {
  return !!obj.metadata.deletionTimestamp && (obj.metadata.finalizers ?? []).length === 0;
}

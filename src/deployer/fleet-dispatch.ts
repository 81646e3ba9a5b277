import type { Json, V1Job } from "../kube/types.ts";
import type { PodState } from "./wait.ts";

export type JobObject = Json<V1Job>;

/** What one node's agent Job hears from the run-wide watches. */
export interface NodeListener {
  pod(pod: PodState, type: string): void;
  job(job: JobObject, type: string): void;
}

/** The UID of the Job that is a pod's controller (the only proof of ownership: pod-select.ts). */
export const controllingJobUid = (pod: PodState): string | undefined =>
  pod.metadata.ownerReferences?.find((r) => r.kind === "Job" && r.controller === true)?.uid;

/**
 * Routes the events of ONE pod watch and ONE Job watch for the whole fleet run (both narrowed by the
 * run-ID label) to the node whose Job UID they carry: the Job's own UID, or a pod's controller
 * ownerReference. An event that arrives before its Job's create has answered (the watches open before
 * the first create) is held, the latest per UID, and replayed when that node registers; so memory stays
 * one object per node and kind, whatever the event count.
 */
export class FleetDispatcher {
  private readonly listeners = new Map<string, NodeListener>();
  private readonly heldPods = new Map<string, { pod: PodState; type: string }>();
  private readonly heldJobs = new Map<string, { job: JobObject; type: string }>();

  /** From now on `uid`'s events go to `listener`; what was held for it is replayed first. */
  register(uid: string, listener: NodeListener): void {
    this.listeners.set(uid, listener);
    const job = this.heldJobs.get(uid);
    const pod = this.heldPods.get(uid);
    this.heldJobs.delete(uid);
    this.heldPods.delete(uid);
    if (pod) listener.pod(pod.pod, pod.type);
    if (job) listener.job(job.job, job.type);
  }

  /** The node has its outcome: its later events are dropped. */
  unregister(uid: string): void {
    this.listeners.delete(uid);
    this.heldJobs.delete(uid);
    this.heldPods.delete(uid);
  }

  pod(pod: PodState, type: string): void {
    const uid = controllingJobUid(pod);
    if (!uid) return;
    const to = this.listeners.get(uid);
    if (to) to.pod(pod, type);
    else this.heldPods.set(uid, { pod, type });
  }

  job(job: JobObject, type: string): void {
    const uid = job.metadata?.uid;
    if (!uid) return;
    const to = this.listeners.get(uid);
    if (to) to.job(job, type);
    else this.heldJobs.set(uid, { job, type });
  }

  /** Objects held for Jobs no node has claimed (yet): a test's view of the bound. */
  get held(): number {
    return this.heldPods.size + this.heldJobs.size;
  }
}

/** The Job controller: pods from the template, counting, backoff, deadline, suspend, TTL after finish. */
import { type KObject, resource, type Store, type StoreEvent } from "../store.ts";
import { type Clock, rfc3339 } from "./clock.ts";
import type { EventRecorder } from "./events.ts";
import { isActive, isReady, isTerminal, ownedPods, podFromTemplate, selectorString } from "./job-pods.ts";
import {
  deadlineIn,
  finishedAt,
  newVerdict,
  pendingVerdict,
  setCount,
  suspendedCond,
  type Verdict,
  withFinal,
  withInterim,
} from "./job-status.ts";
import {
  type Condition,
  controllerRef,
  isStatusError,
  isTrue,
  keyFor,
  sameJson,
  setCondition,
  splitKey,
} from "./k8s.ts";
import { type Backoff, backoffDelay, WorkQueue } from "./queue.ts";

const JOBS = resource("jobs");
const PODS = resource("pods");

export interface JobControllerOptions {
  clock: Clock;
  /** Delay before replacing a failed pod (real: 10s doubling to 6m). */
  podBackoff: Backoff;
  /** Retry of a failed sync, e.g. pod creation rejected by admission (real: 5ms doubling to 1000s). */
  syncBackoff: Backoff;
  record: EventRecorder;
  onError?: (key: string, err: unknown) => void;
}

interface Tracking {
  counted: Set<string>;
  succeeded: number;
  failed: number;
  lastFailureAt?: number;
  createFailures: number;
}

// Simplification: NonIndexed completion only; no podFailurePolicy, successPolicy, backoffLimitPerIndex or
// adoption of orphan pods that match the selector.
export class JobController {
  private readonly queue: WorkQueue;
  private readonly tracking = new Map<string, Tracking>();

  constructor(
    private readonly store: Store,
    private readonly opts: JobControllerOptions,
  ) {
    this.queue = new WorkQueue(opts.clock, (k) => this.sync(k), opts.syncBackoff, opts.onError);
    for (const j of store.list(JOBS).items) this.queue.add(keyFor(j.metadata.namespace, j.metadata.name!));
  }

  onEvent(e: StoreEvent): void {
    const o = e.object;
    if (e.resource === JOBS) {
      if (e.type === "DELETED") this.tracking.delete(o.metadata.uid!);
      this.queue.add(keyFor(o.metadata.namespace, o.metadata.name!));
    } else if (e.resource === PODS) {
      const ref = controllerRef(o);
      if (ref?.kind === "Job" && ref.apiVersion === "batch/v1") {
        // A pod gone before it was counted (deleted at once, no grace) still counts: real Kubernetes
        // holds it with the job-tracking finalizer until it has.
        if (e.type === "DELETED") this.countGone(ref.uid, o);
        this.queue.add(keyFor(o.metadata.namespace, ref.name));
      }
    }
  }

  stop(): Promise<void> {
    return this.queue.stop();
  }

  private sync(key: string): number | undefined {
    const [ns, name] = splitKey(key);
    const job = this.store.find(JOBS, ns, name);
    if (!job || job.metadata.deletionTimestamp) return undefined;
    if (isTrue(job, "Complete") || isTrue(job, "Failed")) return this.expireAfterTtl(job);
    const now = this.opts.clock.now();
    const nowStr = rfc3339(now);
    const candidates = this.store.list(PODS, {
      namespace: ns,
      labelSelector: selectorString(job.spec?.selector),
    }).items;
    const pods = ownedPods(job, candidates);
    const t = this.track(job, pods);
    const status = structuredClone(job.status ?? {});
    let conditions: Condition[] = status.conditions ?? [];
    let requeue: number | undefined;
    const suspended = job.spec?.suspend === true;
    if (!suspended && !status.startTime) status.startTime = nowStr;

    const verdict: Verdict | undefined =
      pendingVerdict(job) ??
      newVerdict({ ...job, status }, { succeeded: t.succeeded, failed: t.failed }, now);
    let active = pods.filter(isActive);
    if (verdict) {
      this.deletePods(job, active);
      active = [];
      // The terminal condition follows the interim one on a later sync, once no pod is left running.
      if (pendingVerdict(job)) {
        conditions = withFinal(conditions, verdict, nowStr);
        if (verdict.kind === "success") {
          status.completionTime = nowStr;
          this.opts.record(job, "Normal", "Completed", "Job completed");
        } else this.opts.record(job, "Warning", verdict.reason, verdict.message);
      } else conditions = withInterim(conditions, verdict, nowStr);
    } else if (suspended) {
      this.deletePods(job, active);
      active = [];
      if (!isTrue(job, "Suspended")) {
        conditions = setCondition(
          conditions,
          suspendedCond("True", "JobSuspended", "Job suspended", nowStr),
          nowStr,
        );
        this.opts.record(job, "Normal", "Suspended", "Job suspended");
      }
      delete status.startTime;
    } else {
      if (isTrue(job, "Suspended")) {
        conditions = setCondition(
          conditions,
          suspendedCond("False", "JobResumed", "Job resumed", nowStr),
          nowStr,
        );
        this.opts.record(job, "Normal", "Resumed", "Job resumed");
        status.startTime = nowStr;
      }
      const r = this.createPods(job, t, active, now);
      active = [...active, ...r.created];
      requeue = r.requeue;
      const dl = deadlineIn({ ...job, status }, now);
      if (dl !== undefined) requeue = Math.min(requeue ?? dl, Math.max(dl, 0));
    }
    status.conditions = conditions;
    if (conditions.length === 0) delete status.conditions;
    setCount(status, "active", active.length);
    setCount(status, "succeeded", t.succeeded);
    setCount(status, "failed", t.failed);
    status.ready = active.filter(isReady).length;
    status.terminating = pods.filter((p) => !isTerminal(p) && p.metadata.deletionTimestamp).length;
    status.uncountedTerminatedPods ??= {};
    if (!sameJson(status, job.status ?? {})) {
      this.store.mutate(JOBS, ns, name, (live) => ({ ...live, status }), { subresource: "status" });
    }
    return requeue;
  }

  /** A deleted pod of a tracked Job, counted once: failed unless it had succeeded. */
  private countGone(jobUid: string | undefined, pod: KObject): void {
    const t = jobUid ? this.tracking.get(jobUid) : undefined;
    if (!t || t.counted.has(pod.metadata.uid!)) return;
    t.counted.add(pod.metadata.uid!);
    if (pod.status?.phase === "Succeeded") t.succeeded++;
    else {
      t.failed++;
      t.lastFailureAt = this.opts.clock.now().getTime();
    }
  }

  private track(job: KObject, pods: KObject[]): Tracking {
    const uid = job.metadata.uid!;
    let t = this.tracking.get(uid);
    // As the real controller does, a pod being deleted that has not succeeded counts as failed at once
    // (it may never reach the Failed phase); so a Job with backoffLimit 0 fails when its pod is deleted.
    const terminal = pods.filter(
      (p) => isTerminal(p) || (p.metadata.deletionTimestamp && p.status?.phase !== "Succeeded"),
    );
    if (!t) {
      const recorded = (job.status?.succeeded ?? 0) + (job.status?.failed ?? 0);
      // After a controller restart, pods the status already reflects are not counted twice.
      const seeded = recorded >= terminal.length ? terminal.map((p) => p.metadata.uid!) : [];
      t = {
        counted: new Set(seeded),
        succeeded: job.status?.succeeded ?? 0,
        failed: job.status?.failed ?? 0,
        createFailures: 0,
      };
      this.tracking.set(uid, t);
    }
    for (const p of terminal) {
      if (t.counted.has(p.metadata.uid!)) continue;
      t.counted.add(p.metadata.uid!);
      if (p.status.phase === "Succeeded") t.succeeded++;
      else {
        t.failed++;
        t.lastFailureAt = this.opts.clock.now().getTime();
      }
    }
    return t;
  }

  private createPods(
    job: KObject,
    t: Tracking,
    active: KObject[],
    now: Date,
  ): { created: KObject[]; requeue?: number } {
    const spec = job.spec ?? {};
    const want = Math.min(spec.parallelism ?? 1, (spec.completions ?? 1) - t.succeeded) - active.length;
    if (want <= 0) return { created: [] };
    if (t.failed > 0 && t.lastFailureAt !== undefined) {
      const wait = t.lastFailureAt + backoffDelay(this.opts.podBackoff, t.failed - 1) - now.getTime();
      if (wait > 0) return { created: [], requeue: wait };
    }
    const created: KObject[] = [];
    for (let i = 0; i < want; i++) {
      try {
        const pod = this.store.create(PODS, podFromTemplate(job));
        created.push(pod);
        t.createFailures = 0;
        this.opts.record(job, "Normal", "SuccessfulCreate", `Created pod: ${pod.metadata.name}`);
      } catch (err) {
        if (!isStatusError(err, 403) && !isStatusError(err, 404) && !isStatusError(err, 422)) throw err;
        this.opts.record(job, "Warning", "FailedCreate", `Error creating: ${(err as Error).message}`);
        return { created, requeue: backoffDelay(this.opts.syncBackoff, t.createFailures++) };
      }
    }
    return { created };
  }

  private deletePods(job: KObject, pods: KObject[]): void {
    for (const p of pods) {
      try {
        this.store.delete(PODS, p.metadata.namespace, p.metadata.name!, {
          preconditions: { uid: p.metadata.uid! },
        });
        this.opts.record(job, "Normal", "SuccessfulDelete", `Deleted pod: ${p.metadata.name}`);
      } catch (err) {
        if (!isStatusError(err, 404) && !isStatusError(err, 409)) throw err;
      }
    }
  }

  /** The ttl-after-finished controller: a finished Job is deleted (Foreground, UID-pinned) once its TTL passes. */
  private expireAfterTtl(job: KObject): number | undefined {
    const ttl = job.spec?.ttlSecondsAfterFinished;
    const done = finishedAt(job);
    if (ttl == null || done === undefined) return undefined;
    const left = done + ttl * 1000 - this.opts.clock.now().getTime();
    if (left > 0) return left;
    try {
      this.store.delete(JOBS, job.metadata.namespace, job.metadata.name!, {
        propagationPolicy: "Foreground",
        preconditions: { uid: job.metadata.uid! },
      });
    } catch (err) {
      if (!isStatusError(err, 404) && !isStatusError(err, 409)) throw err;
    }
    return undefined;
  }
}

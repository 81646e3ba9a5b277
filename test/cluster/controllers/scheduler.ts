/** The default scheduler: binds pending pods with semantics/scheduler.ts, reports Unschedulable otherwise. */
import { schedule } from "../semantics/scheduler.ts";
import { type KObject, resource, type Store, type StoreEvent } from "../store.ts";
import { type Clock, rfc3339 } from "./clock.ts";
import type { EventRecorder } from "./events.ts";
import { type Condition, getCondition, isStatusError, keyFor, setCondition, splitKey } from "./k8s.ts";
import { type Backoff, WorkQueue } from "./queue.ts";

const PODS = resource("pods");
const NODES = resource("nodes");
const RUNTIME_CLASSES = resource("runtimeclasses");

export interface SchedulerOptions {
  clock: Clock;
  backoff: Backoff;
  record: EventRecorder;
  onError?: (key: string, err: unknown) => void;
}

const wantsScheduling = (p: KObject): boolean =>
  !p.spec?.nodeName &&
  !p.metadata.deletionTimestamp &&
  (p.spec?.schedulerName ?? "default-scheduler") === "default-scheduler" &&
  (p.status?.phase ?? "Pending") === "Pending";

export class Scheduler {
  private readonly queue: WorkQueue;
  private readonly unschedulable = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly opts: SchedulerOptions,
  ) {
    this.queue = new WorkQueue(opts.clock, (k) => this.sync(k), opts.backoff, opts.onError);
    for (const p of store.list(PODS).items)
      if (wantsScheduling(p)) this.queue.add(keyFor(p.metadata.namespace, p.metadata.name!));
  }

  onEvent(e: StoreEvent): void {
    if (e.resource === PODS) {
      const key = keyFor(e.object.metadata.namespace, e.object.metadata.name!);
      if (e.type !== "DELETED" && wantsScheduling(e.object)) this.queue.add(key);
      else this.unschedulable.delete(key);
      // A pod leaving a node (deleted or finished) frees resources for the waiting ones.
      if (
        e.object.spec?.nodeName &&
        (e.type === "DELETED" || e.object.status?.phase !== e.oldObject?.status?.phase)
      ) {
        this.retryUnschedulable();
      }
    } else if (e.resource === NODES || e.resource === RUNTIME_CLASSES) {
      this.retryUnschedulable();
    }
  }

  stop(): Promise<void> {
    return this.queue.stop();
  }

  private retryUnschedulable(): void {
    for (const key of this.unschedulable) this.queue.add(key);
  }

  private sync(key: string): undefined {
    const [ns, name] = splitKey(key);
    const pod = this.store.find(PODS, ns, name);
    if (!pod || !wantsScheduling(pod)) {
      this.unschedulable.delete(key);
      return undefined;
    }
    // Read in place, not copied: schedule() only reads, and this runs for every pending pod.
    const nodes = [...this.store.storedObjects(NODES)];
    const podsOnNodes: Record<string, KObject[]> = {};
    for (const p of this.store.storedObjects(PODS)) {
      const n = p.spec?.nodeName;
      if (!n) continue;
      podsOnNodes[n] ??= [];
      podsOnNodes[n].push(p);
    }
    const runtimeClasses = [...this.store.storedObjects(RUNTIME_CLASSES)];
    const result = schedule(pod, nodes, { runtimeClasses, podsOnNodes });
    const now = rfc3339(this.opts.clock.now());
    try {
      if ("nodeName" in result) {
        this.unschedulable.delete(key);
        this.bind(pod, result.nodeName, now);
        this.opts.record(
          pod,
          "Normal",
          "Scheduled",
          `Successfully assigned ${ns}/${name} to ${result.nodeName}`,
        );
      } else {
        this.unschedulable.add(key);
        this.markUnschedulable(pod, result.unschedulable, now);
      }
    } catch (err) {
      // The pod went away or changed under us; its own event brings it back if it still needs a node.
      if (!isStatusError(err, 404) && !isStatusError(err, 409)) throw err;
    }
    return undefined;
  }

  // Simplification: binding is a spec update plus a status update, not the pods/binding subresource.
  private bind(pod: KObject, nodeName: string, now: string): void {
    const { namespace, name, uid } = pod.metadata;
    this.store.mutate(PODS, namespace, name!, (live) => {
      if (live.metadata.uid !== uid || live.spec?.nodeName)
        throw Object.assign(new Error("changed"), { code: 409 });
      return { ...live, spec: { ...live.spec, nodeName } };
    });
    this.store.mutate(
      PODS,
      namespace,
      name!,
      (live) => {
        const cond: Condition = { type: "PodScheduled", status: "True", lastProbeTime: null };
        return {
          ...live,
          status: { ...live.status, conditions: setCondition(live.status?.conditions ?? [], cond, now) },
        };
      },
      { subresource: "status" },
    );
  }

  private markUnschedulable(pod: KObject, message: string, now: string): void {
    const prev = getCondition(pod, "PodScheduled");
    if (prev?.status === "False" && prev.message === message) return;
    const cond: Condition = {
      type: "PodScheduled",
      status: "False",
      reason: "Unschedulable",
      message,
      lastProbeTime: null,
    };
    this.store.mutate(
      PODS,
      pod.metadata.namespace,
      pod.metadata.name!,
      (live) => ({
        ...live,
        status: { ...live.status, conditions: setCondition(live.status?.conditions ?? [], cond, now) },
      }),
      { subresource: "status" },
    );
    this.opts.record(pod, "Warning", "FailedScheduling", message);
  }
}

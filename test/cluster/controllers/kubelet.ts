/** The kubelet: runs scheduled pods through a ContainerRuntime and reports their status, events and logs. */
import { type KObject, resource, type Store, type StoreEvent } from "../store.ts";
import { type Clock, rfc3339 } from "./clock.ts";
import type { EventRecorder } from "./events.ts";
import { isStatusError } from "./k8s.ts";
import type { KubeletLogs } from "./logs.ts";
import { type PodView, renderStatus } from "./pod-status.ts";
import { runPod } from "./pod-worker.ts";
import type { ContainerRuntime } from "./runtime.ts";

const PODS = resource("pods");
const NODES = resource("nodes");

export interface KubeletOptions {
  clock: Clock;
  runtime: ContainerRuntime;
  logs: KubeletLogs;
  /** One recorder per node, so events carry `source.host`. */
  recorderFor(nodeName: string): EventRecorder;
  isUnpullable(image: string): boolean;
  /** Time between ErrImagePull and ImagePullBackOff. */
  imagePullBackoffMs: number;
  onError?: (key: string, err: unknown) => void;
}

interface Worker {
  abort: AbortController;
  done: Promise<void>;
}

const terminal = (p: KObject) => p.status?.phase === "Succeeded" || p.status?.phase === "Failed";

// Simplification: one kubelet serves every Node object; node readiness, leases and heartbeats are not modelled.
export class Kubelet {
  private readonly workers = new Map<string, Worker>();
  private nextIp = 2;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly opts: KubeletOptions,
  ) {
    for (const p of store.list(PODS).items) this.consider(p);
  }

  onEvent(e: StoreEvent): void {
    if (e.resource === NODES && e.type === "ADDED") {
      const name = e.object.metadata.name!;
      for (const p of this.store.list(PODS, { fieldSelector: `spec.nodeName=${name}` }).items)
        this.consider(p);
    }
    if (e.resource !== PODS) return;
    const uid = e.object.metadata.uid!;
    if (e.type === "DELETED") {
      this.workers.get(uid)?.abort.abort();
      this.opts.logs.drop(uid);
      return;
    }
    if (e.object.metadata.deletionTimestamp) this.workers.get(uid)?.abort.abort();
    else this.consider(e.object);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const w of this.workers.values()) w.abort.abort();
    await Promise.all([...this.workers.values()].map((w) => w.done));
    await this.opts.runtime.close?.();
  }

  // Simplification: a kubelet started against a store with Running pods runs their containers again.
  private consider(pod: KObject): void {
    const uid = pod.metadata.uid!;
    if (
      this.stopped ||
      !pod.spec?.nodeName ||
      terminal(pod) ||
      pod.metadata.deletionTimestamp ||
      this.workers.has(uid)
    )
      return;
    // A pod bound to a node that does not exist has no kubelet to run it, and stays Pending.
    if (!this.store.find(NODES, undefined, pod.spec.nodeName)) return;
    const abort = new AbortController();
    const podIP = `10.244.${Math.floor(this.nextIp / 250)}.${(this.nextIp % 250) + 2}`;
    this.nextIp++;
    const done = runPod({
      store: this.store,
      pod,
      podIP,
      hostIP: this.hostIP(pod.spec.nodeName),
      signal: abort.signal,
      clock: this.opts.clock,
      runtime: this.opts.runtime,
      logs: this.opts.logs,
      record: this.opts.recorderFor(pod.spec.nodeName),
      isUnpullable: this.opts.isUnpullable,
      imagePullBackoffMs: this.opts.imagePullBackoffMs,
      writeStatus: (view) => this.writeStatus(pod, view, abort),
    }).catch((err) => {
      // A worker's failure ends that pod's handling only; the status it last wrote stays.
      this.opts.onError?.(`${pod.metadata.namespace}/${pod.metadata.name}`, err);
    });
    this.workers.set(uid, { abort, done });
  }

  private hostIP(nodeName: string): string {
    const node = this.store.find(NODES, undefined, nodeName);
    const addr = (node?.status?.addresses ?? []).find((a: { type: string }) => a.type === "InternalIP");
    return addr?.address ?? "10.0.0.1";
  }

  /** Writes the rendered status; a pod that is gone (or replaced under the same name) ends the worker. */
  private writeStatus(pod: KObject, view: PodView, abort: AbortController): void {
    if (abort.signal.aborted) return;
    const now = rfc3339(this.opts.clock.now());
    try {
      this.store.mutate(
        PODS,
        pod.metadata.namespace,
        pod.metadata.name!,
        (live) => {
          if (live.metadata.uid !== pod.metadata.uid)
            throw Object.assign(new Error("replaced"), { code: 404 });
          return { ...live, status: renderStatus(view, live.status, now) };
        },
        { subresource: "status" },
      );
    } catch (err) {
      if (!isStatusError(err, 404)) throw err;
      abort.abort();
    }
  }
}

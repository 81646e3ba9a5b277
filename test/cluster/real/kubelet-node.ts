/**
 * One Node of the process kubelet: registration, the node lease, status heartbeats, and the watch of the
 * pods bound to it, each run by a PodWorker.
 */
import { KUBERNETES_VERSION } from "../../control-plane/build.ts";
import { sleep } from "../controllers/runtime.ts";
import type { KObject } from "../store.ts";
import { isApiError, microTime, type NodeApi, rfc3339 } from "./kubelet-api.ts";
import { type PodHost, PodWorker, timer } from "./kubelet-pod.ts";

/** The real kubelet renews its lease every 10 s (a quarter of its 40 s duration). */
const LEASE_RENEW_MS = 10_000;
const LEASE_DURATION_S = 40;
/**
 * Node status heartbeat (the real kubelet reports every 5 min when nothing changed, relying on the lease
 * in between). Either one keeps the nodelifecycle controller from tainting the node unreachable.
 */
const NODE_STATUS_MS = 60_000;

/** One Node: registration, lease, status heartbeat, and the pods bound to it. */
export class NodeAgent {
  private readonly name: string;
  private readonly api: NodeApi;
  private readonly abort = new AbortController();
  private readonly timers: ReturnType<typeof setTimeout>[] = [];
  private readonly workers = new Map<string, PodWorker>();
  private readonly running = new Set<Promise<void>>();
  private readonly since = rfc3339();
  private uid?: string;
  private loop?: Promise<void>;

  constructor(
    private readonly node: KObject,
    private readonly port: number,
    private readonly byName: Map<string, PodWorker>,
    private readonly host: PodHost,
  ) {
    this.name = node.metadata.name!;
    this.api = host.api;
  }

  /** Creates the Node (NodeRestriction lets a node create only itself), or takes over an existing one. */
  async register(): Promise<void> {
    const { metadata, spec } = this.node;
    try {
      const created = await this.api.json("POST", "/api/v1/nodes", {
        apiVersion: "v1",
        kind: "Node",
        metadata: { name: this.name, labels: metadata.labels ?? {}, annotations: metadata.annotations ?? {} },
        spec: spec ?? {},
        status: this.status(),
      });
      this.uid = created.metadata.uid;
    } catch (err) {
      if (!isApiError(err, 409)) throw err;
    }
    await this.heartbeat();
    await this.renewLease();
  }

  start(): void {
    // Each loop first runs at a random point of its period, then every period: the nodes of one test
    // bed start together, and 1,000 lease renewals in the same instant every 10 s would be a burst the
    // apiserver queues. (Real kubelets start at different moments, and jitter their loops too.)
    const every = (ms: number, fn: () => Promise<void>) => {
      const run = () => void fn().catch((err) => this.host.onError(`node ${this.name}`, err));
      const first = setTimeout(
        () => {
          run();
          const t = setInterval(run, ms);
          t.unref();
          this.timers.push(t);
        },
        Math.floor(Math.random() * ms),
      );
      first.unref();
      this.timers.push(first);
    };
    every(LEASE_RENEW_MS, () => this.renewLease());
    every(NODE_STATUS_MS, () => this.heartbeat());
    this.loop = this.watchPods();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    for (const t of this.timers) clearInterval(t);
    for (const w of this.workers.values()) w.stop();
    await this.loop;
    await Promise.all([...this.running, ...[...this.workers.values()].map((w) => w.idle())]);
    this.api.close();
  }

  private status(): KObject["status"] {
    const now = rfc3339();
    const given = this.node.status ?? {};
    const condition = (type: string, status: string, reason: string, message: string) => ({
      type,
      status,
      reason,
      message,
      lastHeartbeatTime: now,
      lastTransitionTime: this.since,
    });
    return {
      capacity: given.capacity,
      allocatable: given.allocatable ?? given.capacity,
      conditions: [
        condition(
          "MemoryPressure",
          "False",
          "KubeletHasSufficientMemory",
          "kubelet has sufficient memory available",
        ),
        condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
      ],
      addresses: [
        { type: "InternalIP", address: "127.0.0.1" },
        { type: "Hostname", address: this.name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: this.port } },
      nodeInfo: {
        ...given.nodeInfo,
        kubeletVersion: KUBERNETES_VERSION,
        containerRuntimeVersion: "process://1.0.0",
      },
    };
  }

  /** Status with fresh heartbeat times (merge patch: the kubelet owns every node condition here). */
  private async heartbeat(): Promise<void> {
    const node = await this.api.json(
      "PATCH",
      `/api/v1/nodes/${this.name}/status`,
      { status: this.status() },
      "application/merge-patch+json",
    );
    this.uid = node.metadata.uid;
  }

  /** The node lease in kube-node-lease, owned by the Node, renewed by patch (created when missing). */
  private async renewLease(): Promise<void> {
    const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases`;
    const spec = {
      holderIdentity: this.name,
      leaseDurationSeconds: LEASE_DURATION_S,
      renewTime: microTime(),
    };
    try {
      await this.api.json("PATCH", `${path}/${this.name}`, { spec }, "application/merge-patch+json");
    } catch (err) {
      if (!isApiError(err, 404)) throw err;
      await this.api.json("POST", path, {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: {
          name: this.name,
          namespace: "kube-node-lease",
          ownerReferences: [{ apiVersion: "v1", kind: "Node", name: this.name, uid: this.uid }],
        },
        spec,
      });
    }
  }

  /** List then watch the pods bound here (the Node authorizer requires this field selector); re-list on end or 410. */
  private async watchPods(): Promise<void> {
    const { signal } = this.abort;
    const selector = `fieldSelector=${encodeURIComponent(`spec.nodeName=${this.name}`)}`;
    while (!signal.aborted) {
      try {
        const list = await this.api.json("GET", `/api/v1/pods?${selector}`, undefined, undefined, signal);
        const seen = new Set<string>();
        for (const p of list.items) {
          seen.add(p.metadata.uid);
          this.observe(p);
        }
        for (const [uid, w] of this.workers) if (!seen.has(uid)) this.forget(uid, w);
        const timeout = 300 + Math.floor(Math.random() * 300);
        await this.api.watch(
          `/api/v1/pods?${selector}&watch=true&allowWatchBookmarks=true&timeoutSeconds=${timeout}&resourceVersion=${list.metadata.resourceVersion}`,
          signal,
          (e) => {
            if (e.type === "ADDED" || e.type === "MODIFIED") this.observe(e.object);
            else if (e.type === "DELETED") {
              const w = this.workers.get(e.object.metadata.uid);
              if (w) this.forget(e.object.metadata.uid, w);
            }
            // ERROR (410 Gone: too old a resourceVersion) is followed by the end of the stream: re-list.
          },
        );
      } catch (err) {
        if (signal.aborted) return;
        if (!isApiError(err, 410)) this.host.onError(`watch of pods on ${this.name}`, err);
        await sleep(timer, 1000, signal);
      }
    }
  }

  private observe(pod: KObject): void {
    const uid = pod.metadata.uid!;
    const existing = this.workers.get(uid);
    if (existing) {
      existing.update(pod);
      return;
    }
    const w = new PodWorker(pod, this.host);
    this.workers.set(uid, w);
    this.byName.set(`${pod.metadata.namespace}/${pod.metadata.name}`, w);
    const idle = w.idle();
    this.running.add(idle);
    void idle.then(() => this.running.delete(idle));
  }

  /** The pod is gone from the API: its containers stop and its logs go. */
  private forget(uid: string, w: PodWorker): void {
    w.vanish();
    this.workers.delete(uid);
    for (const [k, v] of this.byName) if (v === w) this.byName.delete(k);
  }
}

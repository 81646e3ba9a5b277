/**
 * One pod's life on the process kubelet, in the fake kubelet's order (controllers/pod-worker.ts): image
 * pulls, the ServiceAccount volume, init containers one by one, then the containers together. Status goes
 * to the real apiserver as the node; a graceful deletion stops the containers, reports their end, then
 * confirms the delete.
 */
import { rm } from "node:fs/promises";
import { ContainerConfigError } from "../controllers/env.ts";
import { ContainerLog } from "../controllers/logs.ts";
import type { ContainerView, PodView } from "../controllers/pod-status.ts";
import { SERVICE_ACCOUNT_MOUNT } from "../controllers/process-runtime.ts";
import { type ContainerRuntime, pullImage, type RunResult, sleep } from "../controllers/runtime.ts";
import type { KObject } from "../store.ts";
import { isApiError, type NodeApi, rfc3339 } from "./kubelet-api.ts";
import { prepareResourceClaims } from "./kubelet-dra.ts";
import type { LogLookup } from "./kubelet-logs.ts";
import {
  confirmDeletion,
  containerId,
  HOST_IP,
  patchStatus,
  podEvent,
  resolveEnv,
  serviceAccountVolume,
} from "./kubelet-pod-api.ts";

export interface PodHost {
  api: NodeApi;
  runtime: ContainerRuntime;
  isUnpullable(image: string): boolean;
  service: { host: string; port: number };
  /** Per-pod volume directories go under it. */
  workDir: string;
  onError(what: string, err: unknown): void;
}

type Spec = KObject["spec"];
/** Between ErrImagePull and ImagePullBackOff (the real kubelet's first back-off is 10 s). */
const IMAGE_PULL_BACKOFF_MS = 500;
/** Between attempts to mount the ServiceAccount volume or to build a container's config. */
const RETRY_MS = 1000;

/** A real-time timer in the shape controllers/runtime.ts `sleep` takes. */
export const timer = (fn: () => void, ms: number): (() => void) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};
const decoder = new TextDecoder();
const text = (c: string | Uint8Array) => (typeof c === "string" ? c : decoder.decode(c));
const terminal = (p: KObject) => p.status?.phase === "Succeeded" || p.status?.phase === "Failed";
const exitedOk = (c: ContainerView) => "terminated" in c.state && c.state.terminated.exitCode === 0;
const fieldPath = (isInit: boolean, c: { name: string }) =>
  `spec.${isInit ? "initContainers" : "containers"}{${c.name}}`;

/** Why the worker's signal aborted: graceful deletion, the pod is gone from the API, or the kubelet stops. */
type Ending = "deleting" | "gone" | "stopping";

export class PodWorker {
  readonly done: Promise<void>;
  private readonly logs = new Map<string, ContainerLog>();
  private readonly abort = new AbortController();
  private ending?: Ending;
  private finished = false;
  private readonly view: PodView;
  /** The status the apiserver last stored: condition transition times are kept from it. */
  private live: any;
  private writes: Promise<void> = Promise.resolve();
  private readonly pending = new Set<Promise<void>>();
  private saDir?: string | null;
  /** Each container's device nodes from the pod's allocated ResourceClaims (kubelet-dra.ts). */
  private devices = new Map<string, string[]>();

  constructor(
    private pod: KObject,
    private readonly host: PodHost,
  ) {
    this.live = pod.status ?? {};
    const waiting = (c: Spec, reason: string): ContainerView => ({
      name: c.name,
      image: c.image,
      state: { waiting: { reason } },
    });
    const init: Spec[] = pod.spec.initContainers ?? [];
    this.view = {
      phase: "Pending",
      hostIP: HOST_IP,
      podIP: HOST_IP,
      startTime: pod.status?.startTime ?? rfc3339(),
      init: init.map((c) => waiting(c, "PodInitializing")),
      main: (pod.spec.containers ?? []).map((c: Spec) =>
        waiting(c, init.length > 0 ? "PodInitializing" : "ContainerCreating"),
      ),
    };
    if (pod.metadata.deletionTimestamp) this.ending = "deleting";
    this.done = this.run();
  }

  /** A newer version of the pod from the watch: a deletionTimestamp starts graceful termination. */
  update(pod: KObject): void {
    this.pod = pod;
    if (pod.metadata.deletionTimestamp) this.end("deleting");
  }

  /** The pod left the API (deleted with grace 0, or after our confirmation): just stop its containers. */
  vanish(): void {
    this.end("gone");
  }

  /** The kubelet stops: containers are stopped, nothing more is reported. */
  stop(): void {
    this.end("stopping");
  }

  /** Resolves when the worker and everything it started (events, a late delete confirmation) are done. */
  async idle(): Promise<void> {
    await this.done;
    while (this.pending.size > 0) await Promise.allSettled(this.pending);
  }

  /** What GET /containerLogs answers for one of this pod's containers (the kubelet's own texts). */
  logFor(container: string): LogLookup {
    const name = this.pod.metadata.name;
    const slot = [...this.view.main, ...this.view.init].find((c) => c.name === container);
    if (!slot) return { status: 404, message: `container "${container}" not found in pod "${name}"` };
    const log = this.logs.get(container);
    if (log) return { log };
    const reason = "waiting" in slot.state ? slot.state.waiting.reason : "ContainerCreating";
    const why = /^(ErrImagePull|ImagePullBackOff)$/.test(reason)
      ? "trying and failing to pull image"
      : reason;
    return { status: 400, message: `container "${container}" in pod "${name}" is waiting to start: ${why}` };
  }

  private end(why: Ending): void {
    if (this.ending === why || this.ending === "gone" || this.ending === "stopping") return;
    if (why === "deleting") {
      const running = (c: ContainerView) => "running" in c.state;
      for (const c of this.view.init.filter(running))
        this.event("Normal", "Killing", `Stopping container ${c.name}`, fieldPath(true, c));
      for (const c of this.view.main.filter(running))
        this.event("Normal", "Killing", `Stopping container ${c.name}`, fieldPath(false, c));
    }
    this.ending = why;
    this.abort.abort();
    // Normally run() confirms once the containers are down; a worker already done confirms now.
    if (why === "deleting" && this.finished) this.track(this.confirm());
  }

  private async run(): Promise<void> {
    // A pod that already ended (seen again after a re-list, or by a restarted kubelet) is not run again.
    const ended = terminal(this.pod);
    try {
      if (!ended && !this.ending) await this.lifecycle();
    } catch (err) {
      this.host.onError(`pod ${this.key()}`, err);
    }
    if (!ended && this.ending !== "gone" && this.ending !== "stopping") {
      // Terminal phase: Succeeded when every container exited 0, else Failed (also for a deleted pod:
      // the kubelet moves a pod to a terminal phase before it confirms the deletion).
      const ok = this.view.init.every(exitedOk) && this.view.main.every(exitedOk);
      this.view.phase = ok && this.view.main.length > 0 ? "Succeeded" : "Failed";
      this.write();
    }
    await this.writes;
    if (this.saDir) await rm(this.saDir, { recursive: true, force: true });
    if (this.ending === "deleting") await this.confirm();
    this.finished = true;
  }

  /** Returns when the containers have ended, or (Pending for good) once the signal aborts. */
  private async lifecycle(): Promise<void> {
    const { pod, view } = this;
    this.write();
    const initSpecs: Spec[] = pod.spec.initContainers ?? [];
    const mainSpecs: Spec[] = pod.spec.containers ?? [];
    // Every image is pulled before any container starts (real kubelets pull per container, just in time).
    for (const [c, isInit, slot] of [
      ...initSpecs.map((c, i) => [c, true, view.init[i]!] as const),
      ...mainSpecs.map((c, i) => [c, false, view.main[i]!] as const),
    ]) {
      const fp = fieldPath(isInit, c);
      const pull = await pullImage(this.host.runtime, c.image, this.host.isUnpullable);
      if (this.abort.signal.aborted) return this.aborted();
      if (pull.ok) {
        if (pull.pulled) {
          this.event("Normal", "Pulling", `Pulling image "${c.image}"`, fp);
          this.event("Normal", "Pulled", `Successfully pulled image "${c.image}"`, fp);
        } else this.event("Normal", "Pulled", `Container image "${c.image}" already present on machine`, fp);
        continue;
      }
      const msg = pull.message;
      this.event("Normal", "Pulling", `Pulling image "${c.image}"`, fp);
      this.event("Warning", "Failed", `Failed to pull image "${c.image}": ${msg}`, fp);
      slot.state = { waiting: { reason: "ErrImagePull", message: msg } };
      this.write();
      if (!(await sleep(timer, IMAGE_PULL_BACKOFF_MS, this.abort.signal))) return;
      // Simplification: after ImagePullBackOff the pull is never retried; the pod stays Pending.
      this.event("Normal", "BackOff", `Back-off pulling image "${c.image}"`, fp);
      slot.state = {
        waiting: { reason: "ImagePullBackOff", message: `Back-off pulling image "${c.image}"` },
      };
      this.write();
      return this.aborted();
    }
    this.saDir = await this.retry("FailedMount", () =>
      serviceAccountVolume(this.host.api, this.pod, this.host.workDir),
    );
    if (this.saDir === undefined) return;
    // Dynamic resources, as the kubelet's DRA manager prepares them before any container: a claim not
    // allocated and reserved for this pod (a pod bound by spec.nodeName, past the scheduler) waits.
    const devices = await this.retry("FailedPrepareDynamicResources", () =>
      prepareResourceClaims(this.host.api, this.pod).catch((err: Error) => {
        err.message = `Failed to prepare dynamic resources: prepare dynamic resources: ${err.message}`;
        throw err;
      }),
    );
    if (devices === undefined) return;
    this.devices = devices;
    for (let i = 0; i < initSpecs.length; i++) {
      const code = await this.runContainer(initSpecs[i], view.init[i]!, true);
      if (code !== 0) return; // a failed init container fails the pod (restartPolicy Never)
    }
    // Simplification: containers are never restarted (OnFailure/Always end like Never).
    await Promise.all(mainSpecs.map((c, i) => this.runContainer(c, view.main[i]!, false)));
  }

  /** Runs one container to its end; undefined when the pod ended before it could start. */
  private async runContainer(spec: Spec, slot: ContainerView, isInit: boolean): Promise<number | undefined> {
    const fp = fieldPath(isInit, spec);
    const env = await this.retry(
      "Failed",
      () => resolveEnv(this.host.api, this.pod, spec, this.host.service),
      slot,
    );
    if (env === undefined || this.abort.signal.aborted) return undefined;
    const log = new ContainerLog();
    this.logs.set(spec.name, log);
    slot.containerID = containerId();
    const startedAt = rfc3339();
    this.event("Normal", "Created", `Created container: ${spec.name}`, fp);
    this.event("Normal", "Started", `Started container ${spec.name}`, fp);
    slot.state = { running: { startedAt } };
    // Running once a container runs (a pod whose containers all wait, after its init containers, is Pending).
    if (!isInit) this.view.phase = "Running";
    this.write();
    const mountsToken = (spec.volumeMounts ?? []).some((m: any) => m.mountPath === SERVICE_ACCOUNT_MOUNT);
    let res: RunResult & { reason?: string };
    try {
      res = await this.host.runtime.run({
        pod: this.pod,
        container: spec,
        env,
        signal: this.abort.signal,
        stdout: (c) => log.write(text(c)),
        stderr: (c) => log.write(text(c)),
        ...(this.saDir && mountsToken ? { serviceAccountDir: this.saDir } : {}),
        ...(this.devices.has(spec.name) ? { devices: this.devices.get(spec.name)! } : {}),
      });
    } catch (err) {
      res = { exitCode: 128, reason: "StartError", message: (err as Error).message };
    } finally {
      log.finish();
    }
    let message = res.message;
    if (
      message === undefined &&
      res.exitCode !== 0 &&
      spec.terminationMessagePolicy === "FallbackToLogsOnError"
    )
      message = log.tailForTerminationMessage();
    slot.state = {
      terminated: {
        exitCode: res.exitCode,
        reason: res.reason ?? (res.exitCode === 0 ? "Completed" : "Error"),
        ...(message ? { message } : {}),
        startedAt,
        finishedAt: rfc3339(),
        containerID: slot.containerID,
      },
    };
    if (this.ending !== "deleting") this.write(); // a deleted pod's end is written once, with its phase
    return res.exitCode;
  }

  /**
   * Retries a step until it works or the pod ends (undefined), as the kubelet's pod sync does: a missing
   * ConfigMap, or a Node-authorizer graph that has not yet seen the pod, are errors that later pass.
   * With a slot, the container waits in CreateContainerConfigError meanwhile.
   */
  private async retry<T>(
    reason: string,
    step: () => Promise<T>,
    slot?: ContainerView,
  ): Promise<T | undefined> {
    let last = "";
    for (;;) {
      if (this.abort.signal.aborted) return undefined;
      try {
        return await step();
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (message !== last) {
          last = message;
          if (!(err instanceof ContainerConfigError) && !isApiError(err))
            this.host.onError(`pod ${this.key()}`, err);
          this.event("Warning", reason, reason === "Failed" ? `Error: ${message}` : message);
          if (slot) {
            slot.state = { waiting: { reason: "CreateContainerConfigError", message } };
            this.write();
          }
        }
      }
      if (!(await sleep(timer, RETRY_MS, this.abort.signal))) return undefined;
    }
  }

  private aborted(): Promise<void> {
    const { signal } = this.abort;
    return new Promise((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }

  /** Queues a status patch of the view as it is now; patches go out in order. */
  private write(): void {
    const view = structuredClone(this.view);
    const now = rfc3339();
    this.writes = this.writes.then(async () => {
      if (this.ending === "gone") return;
      try {
        this.live = await patchStatus(this.host.api, this.pod, view, this.live, now);
      } catch (err) {
        // 404: gone; 409: the UID precondition failed (the name now holds another pod).
        if (isApiError(err, 404, 409)) this.vanish();
        else this.host.onError(`status of pod ${this.key()}`, err);
      }
    });
  }

  private async confirm(): Promise<void> {
    await Promise.allSettled([...this.pending]); // the events recorded so far (not this confirmation)
    try {
      await confirmDeletion(this.host.api, this.pod);
    } catch (err) {
      if (!isApiError(err, 404, 409)) this.host.onError(`delete of pod ${this.key()}`, err);
    }
  }

  private event(type: "Normal" | "Warning", reason: string, message: string, fp?: string): void {
    this.track(
      podEvent(this.host.api, this.pod, type, reason, message, fp).catch((err) => {
        if (!isApiError(err, 403, 404)) this.host.onError(`event for pod ${this.key()}`, err);
      }),
    );
  }

  private track(p: Promise<void>): void {
    this.pending.add(p);
    void p.then(() => this.pending.delete(p));
  }

  private key(): string {
    return `${this.pod.metadata.namespace}/${this.pod.metadata.name}`;
  }
}

/**
 * Controllers of the fake cluster: Job controller (+ TTL after finished), scheduler, kubelet, garbage
 * collector. They act on the Store directly, as system:masters would, and see every change through
 * store.subscribe. See README.md.
 */
import type { Store } from "../store.ts";
import { type Clock, realClock } from "./clock.ts";
import { eventRecorder } from "./events.ts";
import { GarbageCollector } from "./gc.ts";
import { JobController } from "./job.ts";
import { Kubelet } from "./kubelet.ts";
import { type KubeletLogs, kubeletLogs } from "./logs.ts";
import type { Backoff } from "./queue.ts";
import { asRuntime, type ContainerRuntime, type RunFunction } from "./runtime.ts";
import { Scheduler } from "./scheduler.ts";

export { type Clock, FakeClock, realClock } from "./clock.ts";
export { ContainerLog, type KubeletLogs, kubeletLogs, type LogLookup, type LogOptions } from "./logs.ts";
export { type ProcessRuntimeOptions, processRuntime } from "./process-runtime.ts";
export type { ContainerRuntime, RunContext, RunFunction, RunResult } from "./runtime.ts";

export interface ControllerOptions {
  /** Container runtime for the kubelet; a bare function is accepted. Default: every container exits 0. */
  runtime?: ContainerRuntime | RunFunction;
  clock?: Clock;
  /** Images whose pull fails (ErrImagePull, then ImagePullBackOff). */
  unpullableImages?: string[] | ((image: string) => boolean);
  /** Told about unexpected reconcile failures (which are retried with backoff); silent by default. */
  onError?: (controller: "jobs" | "scheduler" | "kubelet" | "gc", key: string, err: unknown) => void;
  /** Which controllers run (all by default). */
  enable?: Partial<Record<"jobs" | "scheduler" | "kubelet" | "gc", boolean>>;
  /** Delays, shortened from the real ones so tests and demos stay quick. */
  timing?: {
    podFailureBackoff?: Backoff;
    syncBackoff?: Backoff;
    imagePullBackoffMs?: number;
  };
}

export interface Controllers {
  /** Where the HTTP layer reads pods/log. */
  logs: KubeletLogs;
  stop(): Promise<void>;
}

// Simplification: real backoffs are 10s→6m (pod failures), 5ms→1000s (sync retries), 10s→5m (image pulls).
const DEFAULTS = {
  podFailureBackoff: { initialMs: 100, maxMs: 5000 },
  syncBackoff: { initialMs: 50, maxMs: 5000 },
  imagePullBackoffMs: 200,
};

export function startControllers(store: Store, options: ControllerOptions = {}): Controllers {
  const clock = options.clock ?? { now: () => store.now(), setTimeout: realClock.setTimeout };
  const timing = { ...DEFAULTS, ...options.timing };
  const on = (k: "jobs" | "scheduler" | "kubelet" | "gc") => options.enable?.[k] !== false;
  const unpullable = options.unpullableImages;
  const isUnpullable =
    typeof unpullable === "function" ? unpullable : (image: string) => (unpullable ?? []).includes(image);
  const logs = kubeletLogs(store);
  const parts: {
    onEvent(e: Parameters<Parameters<Store["subscribe"]>[0]>[0]): void;
    stop(): Promise<void>;
  }[] = [];
  const onError = (c: "jobs" | "scheduler" | "kubelet" | "gc") => (key: string, err: unknown) =>
    options.onError?.(c, key, err);
  if (on("gc"))
    parts.push(new GarbageCollector(store, { clock, backoff: timing.syncBackoff, onError: onError("gc") }));
  if (on("jobs")) {
    const record = eventRecorder(store, clock, { component: "job-controller" });
    parts.push(
      new JobController(store, {
        clock,
        podBackoff: timing.podFailureBackoff,
        syncBackoff: timing.syncBackoff,
        record,
      }),
    );
  }
  if (on("scheduler")) {
    const record = eventRecorder(store, clock, { component: "default-scheduler" });
    parts.push(
      new Scheduler(store, { clock, backoff: timing.syncBackoff, record, onError: onError("scheduler") }),
    );
  }
  if (on("kubelet")) {
    parts.push(
      new Kubelet(store, {
        clock,
        runtime: asRuntime(options.runtime),
        logs,
        recorderFor: (host) => eventRecorder(store, clock, { component: "kubelet", host }),
        isUnpullable,
        imagePullBackoffMs: timing.imagePullBackoffMs,
        onError: onError("kubelet"),
      }),
    );
  }
  const unsubscribe = store.subscribe((e) => {
    for (const p of parts) p.onEvent(e);
  });
  return {
    logs,
    async stop() {
      unsubscribe();
      await Promise.all(parts.map((p) => p.stop()));
    },
  };
}

import { AicrError } from "../core/errors.ts";
import type { KubeClient, ListOptions } from "./client.ts";

export interface WatchUntilOptions<T, R> {
  client: KubeClient;
  /** e.g. { apiVersion: "batch/v1", kind: "Job", plural: "jobs" } */
  apiVersion: string;
  kind: string;
  plural: string;
  list: ListOptions & { namespace: string };
  /** A result ends the wait; undefined keeps watching. */
  check: (object: T, type: string) => R | undefined;
  signal: AbortSignal;
  timeoutMs: number;
  /** Says what we were waiting for in the TIMEOUT message; gets the last object seen. */
  describeTimeout: (last: T | undefined) => string;
  /**
   * Start by watching from this resourceVersion (e.g. the Job create's) instead of listing: nothing
   * this wait cares about can predate it. A watch that ends falls back to list + watch as usual.
   */
  resourceVersion?: string | undefined;
  /**
   * Opened before what `check` depends on exists (e.g. watching for a Job's pods while the Job's
   * create is still in flight): events are held until this settles, then checked in order. A
   * rejection ends the wait with that error.
   */
  ready?: Promise<unknown> | undefined;
}

const RELIST_PAUSE_MS = 200;

const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });

const watchPath = (o: { apiVersion: string; plural: string; namespace: string }): string =>
  `${o.apiVersion.includes("/") ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`}/namespaces/${o.namespace}/${o.plural}`;

/**
 * List, then watch from the list's resourceVersion until `check` answers (or watch at once from a
 * resourceVersion the caller already holds). A watch the server closes
 * (timeout, 410 Gone, a dropped connection) is followed by a fresh list: never polling, never a gap.
 */
export async function watchUntil<T, R>(o: WatchUntilOptions<T, R>): Promise<R> {
  const deadline = AbortSignal.timeout(o.timeoutMs);
  const unready = new AbortController();
  const stop = AbortSignal.any([o.signal, deadline, unready.signal]);
  let last: T | undefined;
  let from = o.resourceVersion;
  let listedOnce = false;
  let ready = o.ready === undefined;
  let held: { object: T; type: string }[] = [];
  let release: (() => void) | undefined;
  o.ready?.then(
    () => {
      ready = true;
      release?.();
    },
    (err) => unready.abort(err),
  );
  const whenReady = async () => {
    if (!ready) await o.ready;
  };
  while (!stop.aborted) {
    let resourceVersion = from;
    from = undefined;
    if (resourceVersion === undefined) {
      await whenReady();
      listedOnce = true;
      const listed = await o.client.list<T & object>(o.apiVersion, o.kind, o.list);
      for (const item of listed.items) {
        last = item;
        const r = o.check(item, "LISTED");
        if (r !== undefined) return r;
      }
      resourceVersion = listed.resourceVersion;
    }
    let found: R | undefined;
    let failure: unknown;
    const watchStop = new AbortController();
    const both = AbortSignal.any([stop, watchStop.signal]);
    const consider = (object: T, type: string) => {
      if (found !== undefined || failure !== undefined) return;
      last = object;
      try {
        const r = o.check(object, type);
        if (r !== undefined) {
          found = r;
          watchStop.abort();
        }
      } catch (err) {
        // Thrown inside the watch's callback it would escape the stream; carry it out instead.
        failure = err;
        watchStop.abort();
      }
    };
    release = () => {
      const events = held;
      held = [];
      for (const e of events) consider(e.object, e.type);
    };
    const ended = await o.client.watch<T>(
      watchPath({ ...o, namespace: o.list.namespace }),
      {
        resourceVersion,
        allowWatchBookmarks: true,
        labelSelector: o.list.labelSelector,
        fieldSelector: o.list.fieldSelector,
      },
      {
        signal: both,
        onEvent: (event) => {
          if (event.type === "BOOKMARK" || event.type === "ERROR") return;
          if (ready) consider(event.object, event.type);
          else held.push({ object: event.object, type: event.type });
        },
      },
    );
    if (held.length > 0 && !stop.aborted) {
      // The watch ended before what its events are checked against existed: check them now.
      await whenReady();
      release();
    }
    if (failure !== undefined) throw failure;
    if (found !== undefined) return found;
    // A watch refused at once (a 5xx, a 410 on resume) is retried after a pause, not in a tight loop.
    if (ended !== undefined && !stop.aborted) await pause(RELIST_PAUSE_MS, stop);
  }
  // Started from a resourceVersion and never listed: look once, so the answer or the TIMEOUT message
  // reflects what stands now rather than only the events that happened to arrive.
  if (unready.signal.aborted) throw unready.signal.reason;
  if (o.resourceVersion !== undefined && !listedOnce && ready && !o.signal.aborted) {
    const listed = await o.client.list<T & object>(o.apiVersion, o.kind, o.list).catch(() => undefined);
    for (const item of listed?.items ?? []) {
      last = item;
      const r = o.check(item, "LISTED");
      if (r !== undefined) return r;
    }
  }
  // A caller that aborts with an AicrError (a fail-fast cause, a signal) gets that error back.
  if (o.signal.aborted) {
    const reason = o.signal.reason;
    throw reason instanceof AicrError
      ? reason
      : new AicrError("CANCELED", "cancelled while waiting", { cause: reason });
  }
  throw new AicrError("TIMEOUT", o.describeTimeout(last), { context: { timeoutMs: o.timeoutMs } });
}

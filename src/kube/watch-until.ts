import { delay } from "../core/async.ts";
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
  /** The only end besides an answer: the run's deadline or cancel (see core/deadline.ts). */
  signal: AbortSignal;
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

const watchPath = (o: { apiVersion: string; plural: string; namespace: string }): string =>
  `${o.apiVersion.includes("/") ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`}/namespaces/${o.namespace}/${o.plural}`;

/**
 * List, then watch from the list's resourceVersion until `check` answers (or watch at once from a
 * resourceVersion the caller already holds). A watch the server closes
 * (timeout, 410 Gone, a dropped connection) is followed by a fresh list: never polling, never a gap.
 */
export async function watchUntil<T, R>(o: WatchUntilOptions<T, R>): Promise<R> {
  const unready = new AbortController();
  const stop = AbortSignal.any([o.signal, unready.signal]);
  let from = o.resourceVersion;
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
      const listed = await o.client.list<T & object>(o.apiVersion, o.kind, o.list);
      for (const item of listed.items) {
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
    if (ended !== undefined && !stop.aborted) await delay(RELIST_PAUSE_MS, stop).catch(() => {});
  }
  if (unready.signal.aborted) throw unready.signal.reason;
  // A caller that aborts with an AicrError (the deadline, a fail-fast cause, a signal) gets it back.
  const reason = o.signal.reason;
  throw reason instanceof AicrError
    ? reason
    : new AicrError("CANCELED", "cancelled while waiting", {
        remedy: "run the command again to finish it",
        cause: reason,
      });
}

/** The streaming watch response: newline-delimited WatchEvents until timeout, abort or a fault. */
import type { ClusterContext, RequestContext } from "./context.ts";
import { ApiStatusError, expired } from "./errors.ts";
import { checkResourceVersion, validateListOptions } from "./list-options.ts";
import type { WatchEvent } from "./objects.ts";
import type { ResourceType } from "./resources.ts";
import type { WatchOptions } from "./store.ts";

const encoder = new TextEncoder();

export function serveWatch(c: ClusterContext, rc: RequestContext, r: ResourceType): Response {
  const q = rc.url.searchParams;
  validateListOptions(q, true);
  checkResourceVersion(q, true);
  const opts: WatchOptions = { allowBookmarks: q.get("allowWatchBookmarks") === "true" };
  if (q.get("sendInitialEvents") === "true") opts.sendInitialEvents = true;
  if (r.namespaced && rc.info.namespace) opts.namespace = rc.info.namespace;
  for (const k of ["labelSelector", "fieldSelector", "resourceVersion"] as const) {
    const v = q.get(k);
    if (v) opts[k] = v;
  }
  const resuming = !opts.sendInitialEvents && !!opts.resourceVersion && opts.resourceVersion !== "0";
  const timeoutSeconds = Number(q.get("timeoutSeconds") ?? 0);
  const cutAfter = rc.effects.cutWatchAfterEvents;
  let cleanup = () => {};

  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false;
      let sent = 0;
      let stop = () => {};
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = () => finish(true);
      const finish = (aborted = false) => {
        if (closed) return;
        closed = true;
        stop();
        if (timer) clearTimeout(timer);
        rc.signal.removeEventListener("abort", onAbort);
        try {
          if (aborted) controller.error(new DOMException("aborted", "AbortError"));
          else controller.close();
        } catch {}
      };
      cleanup = () => finish(true);
      const send = (ev: WatchEvent) => {
        if (closed) return;
        controller.enqueue(encoder.encode(`${JSON.stringify(ev)}\n`));
        if (ev.type === "BOOKMARK") return;
        sent++;
        if (cutAfter !== undefined && sent >= cutAfter) {
          rc.markFault(`watch cut after ${sent} events`);
          queueMicrotask(() => finish());
        }
      };
      rc.signal.addEventListener("abort", onAbort);
      if (rc.effects.watchGoneOnResume && resuming) {
        rc.markFault("watch resume answered 410");
        const e = expired(`too old resource version: ${opts.resourceVersion} (${c.store.resourceVersion})`);
        send({ type: "ERROR", object: e.status as unknown as Record<string, unknown> });
        return finish();
      }
      if (cutAfter === 0) return finish();
      try {
        stop = c.store.watch(r, opts, send);
      } catch (e) {
        if (!(e instanceof ApiStatusError)) throw e;
        send({ type: "ERROR", object: e.status as unknown as Record<string, unknown> });
        return finish();
      }
      // As the apiserver, timeoutSeconds ends the watch on time. Simplification: without it the real one
      // ends a watch after a random 30-60 min (--min-request-timeout x [1, 2)); this one never does.
      if (timeoutSeconds > 0) timer = setTimeout(() => finish(), timeoutSeconds * 1000);
    },
    cancel() {
      cleanup();
    },
  });
  return new Response(body, {
    status: 200,
    headers: { "content-type": "application/json", "cache-control": "no-cache, private" },
  });
}

/** GET pods/<name>/log (container, follow, timestamps, tailLines), served from the kubelet's logs. */

import type { ClusterContext, RequestContext } from "./context.ts";
import { kubeletLogs } from "./controllers/logs.ts";
import { ApiStatusError } from "./errors.ts";
import { resource } from "./resources.ts";

const encoder = new TextEncoder();

export function serveLog(c: ClusterContext, rc: RequestContext): Response {
  const q = rc.url.searchParams;
  const found = kubeletLogs(c.store).get(rc.info.namespace!, rc.info.name!, q.get("container") ?? undefined);
  if ("error" in found) {
    const { code, reason, message } = found.error;
    throw new ApiStatusError(
      code,
      reason,
      message,
      code === 404 ? { name: rc.info.name, kind: "pods" } : undefined,
    );
  }
  // The apiserver has no kubelet to ask for a pod not yet on a node: 204 No Content, as LocationStreamer.
  if (!c.store.find(resource("pods"), rc.info.namespace, rc.info.name!)?.spec?.nodeName)
    return new Response(null, { status: 204 });
  const tail = q.get("tailLines");
  const opts = {
    timestamps: q.get("timestamps") === "true",
    ...(tail !== null ? { tailLines: Number(tail) } : {}),
  };
  const headers = { "content-type": "text/plain" };
  if (q.get("follow") !== "true" || found.log.finished)
    return new Response(found.log.text(opts), { headers });
  const stop = new AbortController();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const abort = () => stop.abort();
      rc.signal.addEventListener("abort", abort, { once: true });
      void found.log
        .follow((text) => controller.enqueue(encoder.encode(text)), stop.signal, opts)
        .then(() => {
          rc.signal.removeEventListener("abort", abort);
          try {
            if (rc.signal.aborted) controller.error(new DOMException("aborted", "AbortError"));
            else controller.close();
          } catch {}
        });
    },
    cancel() {
      stop.abort();
    },
  });
  return new Response(body, { headers });
}

/**
 * The kubelet's HTTPS server, reduced to what kube-apiserver's `pods/log` proxy calls:
 * GET /containerLogs/{namespace}/{pod}/{container}?follow=&tailLines=&timestamps=
 *
 * node:https rather than Bun.serve: Bun.serve holds a streaming response's headers until the first body
 * chunk, and a `kubectl logs -f` of a quiet container would wait for them.
 */
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { pki } from "../certs.ts";
import type { ContainerLog, LogOptions } from "../controllers/logs.ts";

/** A container's log, or the kubelet's error (status and plain-text message). */
export type LogLookup = { log: ContainerLog } | { status: number; message: string };

export interface LogServer {
  port: number;
  close(): Promise<void>;
}

export async function startLogServer(
  lookup: (namespace: string, pod: string, container: string) => LogLookup,
): Promise<LogServer> {
  const p = pki();
  const streams = new Set<AbortController>();
  const fail = (res: import("node:http").ServerResponse, status: number, message: string) => {
    res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
    res.end(message);
  };
  // Simplification: any client is served (the real kubelet authenticates and authorizes the apiserver's
  // client certificate, group system:masters here, through SubjectAccessReviews).
  const server = createServer({ cert: p.serverCert, key: p.serverKey }, (req, res) => {
    const url = new URL(req.url ?? "/", "https://kubelet.invalid");
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (req.method !== "GET" || !m) return fail(res, 404, "404 page not found\n");
    const [ns, pod, container] = m.slice(1).map(decodeURIComponent) as [string, string, string];
    const q = url.searchParams;
    const flag = (k: string) => q.get(k) === "true" || q.get(k) === "1";
    // Simplification: previous, sinceSeconds, sinceTime and limitBytes are not supported. Containers are
    // never restarted, so a previous instance never exists (the kubelet's own answer for restartCount 0).
    if (flag("previous"))
      return fail(res, 400, `previous terminated container "${container}" in pod "${pod}" not found`);
    const found = lookup(ns, pod, container);
    if ("status" in found) return fail(res, found.status, found.message);
    const tail = q.get("tailLines");
    const opts: LogOptions = {
      timestamps: flag("timestamps"),
      ...(tail !== null && /^\d+$/.test(tail) ? { tailLines: Number(tail) } : {}),
    };
    res.writeHead(200, { "Content-Type": "text/plain", "Transfer-Encoding": "chunked" });
    if (!flag("follow")) return res.end(found.log.text(opts));
    // Headers go out at once; each chunk as the container writes it, until it ends or the client goes.
    res.flushHeaders();
    const gone = new AbortController();
    streams.add(gone);
    res.on("close", () => gone.abort());
    void found.log
      .follow((chunk) => res.write(chunk), gone.signal, opts)
      .then(() => {
        streams.delete(gone);
        res.end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of streams) s.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The private loopback server that hands requests to the msw handlers. It is node:http (run by
 * Bun) rather than Bun.serve because Bun.serve holds back a streaming response's status line and
 * headers until the first body chunk; client-go blocks on those headers before the first watch
 * event (kubectl wait would never return).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export type FetchLike = (req: Request, remotePort: number | undefined) => Promise<Response>;

function toRequest(req: http.IncomingMessage, body: Buffer | undefined, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) for (const x of v) headers.append(k, x);
    else if (v !== undefined) headers.set(k, v);
  }
  const init: RequestInit = { method: req.method ?? "GET", headers, signal };
  if (body && body.length > 0) init.body = body;
  return new Request(`http://${req.headers.host ?? "127.0.0.1"}${req.url ?? "/"}`, init);
}

async function readAll(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export interface Backend {
  port: number;
  close(): Promise<void>;
}

export function startBackend(handle: FetchLike): Promise<Backend> {
  const server = http.createServer(async (req, res) => {
    const abort = new AbortController();
    // req 'close' fires once a body is read; the response's 'close' marks the client going away.
    res.on("close", () => abort.abort());
    try {
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const body = hasBody ? await readAll(req) : undefined;
      const response = await handle(toRequest(req, body, abort.signal), req.socket.remotePort);
      const headers: Record<string, string> = {};
      response.headers.forEach((v, k) => {
        headers[k] = v;
      });
      // kube-apiserver's WithCacheControl filter marks every answer so.
      headers["cache-control"] ??= "no-cache, private";
      res.writeHead(response.status, headers);
      res.flushHeaders();
      if (!response.body) return void res.end();
      const reader = response.body.getReader();
      abort.signal.addEventListener("abort", () => reader.cancel().catch(() => {}));
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
      res.end();
    } catch {
      if (!res.headersSent) res.writeHead(500);
      res.destroy();
    }
  });
  server.keepAliveTimeout = 0;
  server.timeout = 0;
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

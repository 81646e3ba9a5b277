/**
 * The process kubelet's API client: one per Node, authenticated by the node's client certificate
 * (CN=system:node:<name>, O=system:nodes), so the Node authorizer and NodeRestriction admission apply to
 * every request, as they do to a real kubelet's.
 *
 * Like client-go's, it speaks HTTP/2 over one connection per kubelet, every request and watch a stream
 * of it (node:http2). Not fetch: Bun runs at most 256 fetches at once in a process
 * (BUN_CONFIG_MAX_HTTP_REQUESTS, read only at start-up), and each node's pod watch holds one for
 * minutes — with 1,000 nodes the first 256 watches took every slot, and no lease renewal, status
 * heartbeat, nor any other fetch of the process (the mirror's) left the queue: the nodes went
 * unreachable 40 s later.
 */
import http2 from "node:http2";
import { nodeClientCert } from "./kubelet-certs.ts";

/** A non-2xx answer; `status` is the HTTP code, `message` the Status message when there is one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const isApiError = (e: unknown, ...codes: number[]): e is ApiError =>
  e instanceof ApiError && (codes.length === 0 || codes.includes(e.status));

export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: any;
}

/** A request that is not a watch fails after this long without an answer (client-go's default: none). */
const REQUEST_TIMEOUT_MS = 60_000;

interface Open {
  status: number;
  stream: http2.ClientHttp2Stream;
}

export class NodeApi {
  private readonly tls: { ca: string; cert: string; key: string };
  private session: http2.ClientHttp2Session | undefined;
  private closed = false;

  constructor(
    private readonly base: string,
    ca: string,
    readonly nodeName: string,
  ) {
    this.tls = { ca, ...nodeClientCert(nodeName) };
  }

  /** The connection, opened on first use and again after the apiserver closed it. */
  private connection(): http2.ClientHttp2Session {
    const live = this.session;
    if (live && !live.closed && !live.destroyed) return live;
    const s = http2.connect(this.base, this.tls);
    const forget = () => {
      if (this.session === s) this.session = undefined;
    };
    // A broken connection fails its streams (each request sees the error); the next request reconnects.
    s.on("error", forget);
    s.on("goaway", forget);
    s.on("close", forget);
    this.session = s;
    return s;
  }

  /** Ends the connection; later requests fail. */
  close(): void {
    this.closed = true;
    this.session?.close();
    this.session = undefined;
  }

  /** Sends a request; resolves with the status once the response headers are in. */
  private open(
    method: string,
    path: string,
    o: { body?: unknown; contentType?: string; signal?: AbortSignal; timeoutMs?: number },
  ): Promise<Open> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error(`${method} ${path}: the kubelet of ${this.nodeName} stopped`));
      if (o.signal?.aborted) return reject(o.signal.reason);
      let stream: http2.ClientHttp2Stream;
      try {
        stream = this.connection().request(
          {
            ":method": method,
            ":path": path,
            accept: "application/json",
            "user-agent": `aicr-process-kubelet/${this.nodeName}`,
            ...(o.body !== undefined ? { "content-type": o.contentType ?? "application/json" } : {}),
          },
          // node:http2 ends a DELETE's stream with its headers unless told otherwise: the kubelet's
          // DeleteOptions (grace 0, the UID precondition) would be dropped.
          { endStream: o.body === undefined },
        );
      } catch (err) {
        this.session = undefined;
        return reject(err);
      }
      const cancel = () => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        reject(o.signal?.reason ?? new Error(`${method} ${path}: cancelled`));
      };
      o.signal?.addEventListener("abort", cancel, { once: true });
      stream.once("close", () => o.signal?.removeEventListener("abort", cancel));
      stream.once("error", (err) => reject(new Error(`${method} ${path}: ${err.message}`)));
      if (o.timeoutMs) {
        const t = setTimeout(() => {
          stream.close(http2.constants.NGHTTP2_CANCEL);
          reject(new Error(`${method} ${path}: no answer in ${o.timeoutMs} ms`));
        }, o.timeoutMs);
        stream.once("close", () => clearTimeout(t));
      }
      stream.once("response", (headers) => resolve({ status: Number(headers[":status"]), stream }));
      stream.end(o.body !== undefined ? JSON.stringify(o.body) : undefined);
    });
  }

  /** The whole body of a stream, as text. */
  private static text(stream: http2.ClientHttp2Stream): Promise<string> {
    return new Promise((resolve, reject) => {
      let text = "";
      stream.setEncoding("utf8");
      stream.on("data", (d: string) => (text += d));
      stream.once("end", () => resolve(text));
      stream.once("error", reject);
      stream.once("close", () => resolve(text));
    });
  }

  private static async fail(method: string, path: string, r: Open): Promise<never> {
    const text = await NodeApi.text(r.stream);
    let message = text;
    try {
      message = JSON.parse(text).message ?? text;
    } catch {}
    throw new ApiError(r.status, `${method} ${path}: ${r.status} ${message}`);
  }

  async json<T = any>(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
    signal?: AbortSignal,
  ): Promise<T> {
    const r = await this.open(method, path, {
      body,
      ...(contentType ? { contentType } : {}),
      ...(signal ? { signal } : {}),
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
    if (r.status < 200 || r.status >= 300) return NodeApi.fail(method, path, r);
    const text = await NodeApi.text(r.stream);
    return (text ? JSON.parse(text) : {}) as T;
  }

  /** Streams a watch's events until the server ends it or `signal` aborts. */
  async watch(path: string, signal: AbortSignal, onEvent: (e: WatchEvent) => void): Promise<void> {
    const r = await this.open("GET", path, { signal });
    if (r.status < 200 || r.status >= 300) return NodeApi.fail("GET", path, r);
    await new Promise<void>((resolve, reject) => {
      let buf = "";
      r.stream.setEncoding("utf8");
      r.stream.on("data", (chunk: string) => {
        buf += chunk;
        try {
          for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
            const line = buf.slice(0, i).trim();
            buf = buf.slice(i + 1);
            if (line) onEvent(JSON.parse(line) as WatchEvent);
          }
        } catch (err) {
          r.stream.close(http2.constants.NGHTTP2_CANCEL);
          reject(err);
        }
      });
      r.stream.once("end", () => resolve());
      r.stream.once("close", () => resolve());
      r.stream.once("error", (err) => reject(new Error(`watch ${path}: ${err.message}`)));
    });
  }
}

/** Kubernetes MicroTime (leases): RFC 3339 with microseconds. */
export const microTime = (d = new Date()): string => `${d.toISOString().slice(0, 23)}000Z`;
/** Kubernetes Time: RFC 3339 in seconds. */
export const rfc3339 = (d = new Date()): string => `${d.toISOString().slice(0, 19)}Z`;

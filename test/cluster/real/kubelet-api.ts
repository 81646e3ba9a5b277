/**
 * The process kubelet's API client: one per Node, authenticated by the node's client certificate
 * (CN=system:node:<name>, O=system:nodes), so the Node authorizer and NodeRestriction admission apply to
 * every request, as they do to a real kubelet's.
 */
import { clientCert } from "../certs.ts";

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

export class NodeApi {
  private readonly tls: { ca: string; cert: string; key: string };

  constructor(
    private readonly base: string,
    ca: string,
    readonly nodeName: string,
  ) {
    this.tls = { ca, ...clientCert(`system:node:${nodeName}`, ["system:nodes"]) };
  }

  async send(
    method: string,
    path: string,
    o: { body?: unknown; contentType?: string; signal?: AbortSignal; stream?: boolean } = {},
  ): Promise<Response> {
    const res = await fetch(this.base + path, {
      method,
      headers: {
        Accept: "application/json",
        "User-Agent": `aicr-process-kubelet/${this.nodeName}`,
        ...(o.body !== undefined ? { "Content-Type": o.contentType ?? "application/json" } : {}),
      },
      ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.stream ? { timeout: false } : {}),
      tls: this.tls,
    } as RequestInit);
    if (res.status >= 200 && res.status < 300) return res;
    const text = await res.text();
    let message = text;
    try {
      message = JSON.parse(text).message ?? text;
    } catch {}
    throw new ApiError(res.status, `${method} ${path}: ${res.status} ${message}`);
  }

  async json<T = any>(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
    signal?: AbortSignal,
  ): Promise<T> {
    const res = await this.send(method, path, {
      body,
      ...(contentType ? { contentType } : {}),
      ...(signal ? { signal } : {}),
    });
    const text = await res.text();
    return (text ? JSON.parse(text) : {}) as T;
  }

  /** Streams a watch's events until the server ends it or `signal` aborts. */
  async watch(path: string, signal: AbortSignal, onEvent: (e: WatchEvent) => void): Promise<void> {
    const res = await this.send("GET", path, { signal, stream: true });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const line = buf.slice(0, i).trim();
        buf = buf.slice(i + 1);
        if (line) onEvent(JSON.parse(line) as WatchEvent);
      }
    }
  }
}

/** Kubernetes MicroTime (leases): RFC 3339 with microseconds. */
export const microTime = (d = new Date()): string => `${d.toISOString().slice(0, 23)}000Z`;
/** Kubernetes Time: RFC 3339 in seconds. */
export const rfc3339 = (d = new Date()): string => `${d.toISOString().slice(0, 19)}Z`;

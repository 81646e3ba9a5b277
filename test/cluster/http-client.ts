/** A minimal fetch client for tests that talk to a fake cluster on the wire. */
import type { Cluster } from "./server.ts";

export interface WireResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface WireClient {
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<WireResponse>;
  get(path: string): Promise<WireResponse>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<WireResponse>;
  put(path: string, body: unknown): Promise<WireResponse>;
  patch(path: string, body: unknown, contentType: string): Promise<WireResponse>;
  delete(path: string, body?: unknown): Promise<WireResponse>;
  /** Opens a streaming GET; lines arrive through `next()`. */
  stream(path: string): Promise<WireStream>;
}

export interface WireStream {
  status: number;
  /** The next newline-terminated line, or undefined at the end of the stream. */
  next(): Promise<string | undefined>;
  close(): void;
}

/** A client authenticating as `user` (a token), or anonymous when user is undefined. */
export function wireClient(
  cluster: Cluster,
  user?: string,
  extraHeaders: Record<string, string> = {},
): WireClient {
  const auth: Record<string, string> = user ? { authorization: `Bearer ${cluster.tokenFor(user)}` } : {};
  const tls = cluster.caCert ? { tls: { ca: cluster.caCert } } : {};
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const init: RequestInit = { method, headers: { ...auth, ...extraHeaders, ...headers }, ...tls };
    if (body !== undefined) {
      init.body = typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] ??= "application/json";
    }
    const res = await fetch(cluster.url + path, init);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  return {
    request: call,
    get: (p) => call("GET", p),
    post: (p, b, h) => call("POST", p, b, h),
    put: (p, b) => call("PUT", p, b),
    patch: (p, b, contentType) => call("PATCH", p, b, { "content-type": contentType }),
    delete: (p, b) => call("DELETE", p, b),
    async stream(path) {
      const abort = new AbortController();
      const res = await fetch(cluster.url + path, {
        headers: { ...auth, ...extraHeaders },
        signal: abort.signal,
        ...tls,
      });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      return {
        status: res.status,
        async next() {
          for (;;) {
            const i = buffer.indexOf("\n");
            if (i >= 0) {
              const line = buffer.slice(0, i);
              buffer = buffer.slice(i + 1);
              return line;
            }
            const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
            if (done) {
              const rest = buffer;
              buffer = "";
              return rest === "" ? undefined : rest;
            }
            buffer += decoder.decode(value, { stream: true });
          }
        },
        close: () => abort.abort(),
      };
    },
  };
}

/**
 * A minimal fetch client for tests that talk to a cluster on the wire: a TestCluster of either backend
 * (testbed.ts), or the fake's own Cluster handle.
 *
 * Credentials are the ones kubeconfigFor(user) writes, so each backend authenticates its own way: on the
 * fake a bearer token; on the real backend a client certificate (CN = user, O = groups; the real
 * apiserver's token file is fixed when it starts) or, for system:serviceaccount:<ns>:<name>, a
 * TokenRequest JWT. A fake Cluster handle uses its bearer tokens directly.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import type { Cluster } from "./server.ts";
import type { TestCluster } from "./testbed.ts";

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
  get(path: string, headers?: Record<string, string>): Promise<WireResponse>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<WireResponse>;
  put(path: string, body: unknown): Promise<WireResponse>;
  patch(path: string, body: unknown, contentType: string): Promise<WireResponse>;
  delete(path: string, body?: unknown): Promise<WireResponse>;
  /** Opens a streaming GET; lines arrive through `next()`. */
  stream(path: string): Promise<WireStream>;
}

export interface WireStream {
  status: number;
  headers: Headers;
  /** The next newline-terminated line, or undefined at the end of the stream. */
  next(): Promise<string | undefined>;
  close(): void;
}

/** What a request carries to authenticate: a bearer token header and/or a client certificate. */
export interface WireCredentials {
  headers: Record<string, string>;
  cert?: { cert: string; key: string };
}

const isTestCluster = (c: TestCluster | Cluster): c is TestCluster => "backend" in c;

const credentialCache = new WeakMap<object, Map<string, WireCredentials>>();

/** The credentials of `user` as its kubeconfig holds them (token, or client certificate and key). */
export function credentialsFor(
  cluster: TestCluster | Cluster,
  user: string,
  auth?: "token" | "certificate",
): WireCredentials {
  const perCluster = credentialCache.get(cluster) ?? new Map<string, WireCredentials>();
  credentialCache.set(cluster, perCluster);
  const cacheKey = `${auth ?? ""}/${user}`;
  const hit = perCluster.get(cacheKey);
  if (hit) return hit;
  let creds: WireCredentials;
  if (!isTestCluster(cluster) && auth !== "certificate")
    creds = { headers: { authorization: `Bearer ${cluster.tokenFor(user)}` } };
  else {
    const doc = parse(readFileSync(cluster.kubeconfigFor(user, auth ? { auth } : {}), "utf8")) as {
      users: { user: { token?: string; "client-certificate-data"?: string; "client-key-data"?: string } }[];
    };
    const u = doc.users[0]!.user;
    const b64 = (s: string) => Buffer.from(s, "base64").toString("utf8");
    creds = {
      headers: u.token ? { authorization: `Bearer ${u.token}` } : {},
      ...(u["client-certificate-data"] && u["client-key-data"]
        ? { cert: { cert: b64(u["client-certificate-data"]), key: b64(u["client-key-data"]) } }
        : {}),
    };
  }
  // ServiceAccount tokens are bound to the ServiceAccount's uid: not cached across recreations.
  if (!user.startsWith("system:serviceaccount:")) perCluster.set(cacheKey, creds);
  return creds;
}

/**
 * A client authenticating as `user` (see the file comment), or anonymous when user is undefined.
 * `extraHeaders` go with every request (e.g. Impersonate-User, or a bad Authorization). `auth:
 * "certificate"` asks the fake for a client certificate too (HTTPS only; the real backend always uses one).
 */
export function wireClient(
  cluster: TestCluster | Cluster,
  user?: string,
  extraHeaders: Record<string, string> = {},
  opts: { auth?: "token" | "certificate" } = {},
): WireClient {
  const creds: WireCredentials = user ? credentialsFor(cluster, user, opts.auth) : { headers: {} };
  const tls = cluster.caCert ? { tls: { ca: cluster.caCert, ...(creds.cert ?? {}) } } : {};
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const init: RequestInit = { method, headers: { ...creds.headers, ...extraHeaders, ...headers }, ...tls };
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
    get: (p, h) => call("GET", p, undefined, h),
    post: (p, b, h) => call("POST", p, b, h),
    put: (p, b) => call("PUT", p, b),
    patch: (p, b, contentType) => call("PATCH", p, b, { "content-type": contentType }),
    delete: (p, b) => call("DELETE", p, b),
    async stream(path) {
      const abort = new AbortController();
      const res = await fetch(cluster.url + path, {
        headers: { ...creds.headers, ...extraHeaders },
        signal: abort.signal,
        ...tls,
      });
      return { headers: res.headers, ...lineStream(res, abort) };
    },
  };
}

/** The list's resourceVersion now: where a watch starts to see only what follows. */
export async function currentResourceVersion(client: WireClient, listPath: string): Promise<string> {
  const res = await client.get(`${listPath}${listPath.includes("?") ? "&" : "?"}limit=1`);
  if (res.status !== 200) throw new Error(`list ${listPath}: ${res.status} ${res.text}`);
  return res.body.metadata.resourceVersion;
}

/** A streaming answer read line by line (watch events, followed logs); `close` aborts the request. */
export function lineStream(
  res: Response,
  abort: AbortController,
): { status: number; next(): Promise<string | undefined>; close(): void } {
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
}

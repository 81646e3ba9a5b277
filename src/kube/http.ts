import type { KubeConfig } from "@kubernetes/client-node";
import { AicrError } from "../core/errors.ts";
import { VERSION } from "../core/version.ts";

/**
 * Requests to the apiserver: the kubeconfig's meaning (server, TLS material, credentials, their
 * refresh by exec plugins and token files) comes from client-node's KubeConfig; the bytes go over one
 * Bun.FetchSession per client, so every request of a run shares a keep-alive pool of TLS connections
 * instead of opening its own, and answers stay plain JSON (no typed-model conversion).
 */

/**
 * A non-2xx answer, with the apiserver's Status body as it came and the request it answered
 * (kube/errors.ts decodes it into the KubeStatusError the client throws).
 */
export class KubeHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly headers: Headers,
    readonly method: string,
    readonly path: string,
  ) {
    super(`HTTP ${status}`);
    this.name = "KubeHttpError";
  }
}

/**
 * No response headers within the limit: a server (or something in front of it) that accepts the
 * connection and never answers. Without this bound such a request waits forever.
 */
export class NoAnswerError extends Error {
  constructor(readonly limitMs: number) {
    super(`no response within ${limitMs / 1000}s`);
    this.name = "NoAnswerError";
  }
}

/** How long a request waits for the response headers: connect, TLS handshake and the server's answer. */
export const RESPONSE_HEADER_TIMEOUT_MS = 30_000;

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query | undefined;
  body?: unknown;
  /** Content-Type of `body` (JSON by default). */
  contentType?: string | undefined;
  signal?: AbortSignal | undefined;
  /**
   * A watch or a followed log: may stay silent for minutes, so Bun's idle timer (5 min) is off; the
   * caller's signal bounds it (--timeout, the watch's own deadline).
   */
  stream?: boolean | undefined;
}

interface HttpsOptions {
  headers?: Record<string, string | string[] | number | undefined>;
  ca?: Buffer | string;
  cert?: Buffer | string;
  key?: Buffer | string;
  passphrase?: string;
  rejectUnauthorized?: boolean;
  servername?: string;
  auth?: string;
}

const USER_AGENT = `aicr/${VERSION}`;

export class KubeHttp {
  private session: Bun.FetchSession | undefined;
  /** See plainHttpView: false once known not to be needed. */
  private plainView: KubeConfig | false | undefined;
  /** True once any response came back: the server is there, so a later silence is its own matter. */
  answered = false;

  constructor(
    private readonly kc: KubeConfig,
    readonly server: string,
    private readonly headerTimeoutMs: number = RESPONSE_HEADER_TIMEOUT_MS,
  ) {}

  /** The kubeconfig's credentials for one request (exec plugins and token files refresh here). */
  private async credentials(): Promise<{ headers: Record<string, string>; https: HttpsOptions }> {
    const https: HttpsOptions = {};
    const plain = this.plainHttpView();
    await (plain ?? this.kc).applyToHTTPSOptions(https as never);
    if (plain) delete https.rejectUnauthorized;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(https.headers ?? {})) {
      if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : String(v);
    }
    if (https.auth) headers.Authorization = `Basic ${Buffer.from(https.auth).toString("base64")}`;
    return { headers, https };
  }

  /**
   * A plain `http://` server (what `kubectl proxy` serves) whose kubeconfig does not say
   * insecure-skip-tls-verify: there is no TLS to configure, and kubectl accepts it. client-node
   * refuses it (its own HTTPS agent, which aicr never uses, would not fit), so the credentials are
   * read through a view of the kubeconfig whose cluster carries the flag; the rejectUnauthorized it
   * implies is dropped again. Undefined for every other server: the kubeconfig is read as it is.
   */
  private plainHttpView(): KubeConfig | undefined {
    if (this.plainView !== undefined) return this.plainView || undefined;
    const cluster = this.kc.getCurrentCluster();
    if (!/^http:\/\//i.test(this.server) || !cluster || cluster.skipTLSVerify) {
      this.plainView = false;
      return undefined;
    }
    // Everything else (users, contexts, exec plugins and their cached tokens) is read from kc itself.
    const view = Object.create(this.kc) as KubeConfig;
    view.getCurrentCluster = () => ({ ...cluster, skipTLSVerify: true });
    this.plainView = view;
    return view;
  }

  /** One session for the client's life: its TLS settings are fixed by the kubeconfig. */
  private sessionFor(https: HttpsOptions): Bun.FetchSession {
    if (this.session) return this.session;
    const proxy = this.kc.getCurrentCluster()?.proxyUrl;
    if (proxy && !/^https?:\/\//.test(proxy)) {
      throw new AicrError(
        "INVALID_REQUEST",
        `the kubeconfig's proxy-url ${JSON.stringify(proxy)} is not supported`,
        {
          remedy:
            "use an http:// or https:// proxy (aicr does not speak SOCKS), or run from a host that reaches the API server",
          context: { field: "proxy-url", value: proxy },
        },
      );
    }
    const text = (v: Buffer | string | undefined) => (v === undefined ? undefined : v.toString());
    this.session = new Bun.FetchSession({
      tls: {
        ...(https.ca !== undefined ? { ca: text(https.ca) } : {}),
        ...(https.cert !== undefined ? { cert: text(https.cert) } : {}),
        ...(https.key !== undefined ? { key: text(https.key) } : {}),
        ...(https.passphrase !== undefined ? { passphrase: https.passphrase } : {}),
        // Always explicit: Bun's default follows NODE_TLS_REJECT_UNAUTHORIZED, which kubectl ignores.
        // Only the kubeconfig's insecure-skip-tls-verify turns verification off.
        rejectUnauthorized: https.rejectUnauthorized ?? true,
        ...(https.servername !== undefined ? { serverName: https.servername } : {}),
      },
      ...(proxy ? { proxy } : {}),
    });
    return this.session;
  }

  url(path: string, query: Query = {}): string {
    const url = new URL(this.server.replace(/\/+$/, "") + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    return url.toString();
  }

  /** The raw answer; a non-2xx status is the caller's to read (streams) or `json` turns it into an error. */
  async send(method: string, path: string, o: RequestOptions = {}): Promise<Response> {
    const { headers, https } = await this.credentials();
    const session = this.sessionFor(https);
    const body =
      o.body === undefined ? undefined : typeof o.body === "string" ? o.body : JSON.stringify(o.body);
    // Bounds the wait for the headers only: a watch or a log may then stay silent as long as it likes.
    const unanswered = new AbortController();
    const timer = setTimeout(
      () => unanswered.abort(new NoAnswerError(this.headerTimeoutMs)),
      this.headerTimeoutMs,
    );
    try {
      const res = await session.fetch(this.url(path, o.query), {
        method,
        headers: {
          ...headers,
          Accept: "application/json",
          "User-Agent": USER_AGENT,
          ...(body !== undefined ? { "Content-Type": o.contentType ?? "application/json" } : {}),
        },
        ...(body !== undefined ? { body } : {}),
        signal: o.signal ? AbortSignal.any([o.signal, unanswered.signal]) : unanswered.signal,
        ...(o.stream ? { timeout: false } : {}),
      });
      this.answered = true;
      return res;
    } catch (err) {
      if (unanswered.signal.aborted && !o.signal?.aborted) throw unanswered.signal.reason;
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** A JSON request whose non-2xx answer becomes a KubeHttpError. */
  async json<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const res = await this.send(method, path, o);
    const text = await res.text();
    if (res.status < 200 || res.status > 299)
      throw new KubeHttpError(res.status, text, res.headers, method, path);
    return (text ? JSON.parse(text) : {}) as T;
  }

  /** Idle connections are closed so the process can exit at once. */
  close(): void {
    this.session?.close();
  }
}

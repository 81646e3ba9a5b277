import type { KubeConfig } from "@kubernetes/client-node";
import { AicrError } from "../core/errors.ts";
import { VERSION } from "../core/version.ts";
import {
  type ExecClusterInfo,
  type ExecCredential,
  type ExecOptions,
  type ExecPlugin,
  execCredential,
  execPlugin,
  forgetExecCredential,
  pluginName,
} from "./_exec-credential.ts";

/**
 * Requests to the apiserver: the kubeconfig's meaning (server, TLS material, credentials, their
 * refresh by token files) comes from client-node's KubeConfig, except exec credential plugins, which
 * kube/_exec-credential.ts runs as kubectl does (cached for the process, one run at a time) and
 * bounds; the bytes go over one Bun.FetchSession per client, so every request of a run shares a
 * keep-alive pool of TLS connections instead of opening its own, and answers stay plain JSON (no
 * typed-model conversion).
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

/** One request's credentials: headers, TLS material, and the plugin credential they came from. */
interface Credentials {
  headers: Record<string, string>;
  https: HttpsOptions;
  exec: ExecCredential | undefined;
}

export class KubeHttp {
  private session: Bun.FetchSession | undefined;
  /** The client certificate and key the session was made with (an exec plugin's may change). */
  private sessionIdentity: string | undefined;
  /** See view(). */
  private kcView: { kc: KubeConfig; plain: boolean } | undefined;
  /** The current user's exec plugin, checked (null: none, or kubectl would not use it). */
  private plugin: ExecPlugin | null | undefined;
  /** Requests waiting for the exec plugin's credential now. */
  private waitingForPlugin = 0;
  /** True once any response came back: the server is there, so a later silence is its own matter. */
  answered = false;

  constructor(
    private readonly kc: KubeConfig,
    readonly server: string,
    private readonly headerTimeoutMs: number = RESPONSE_HEADER_TIMEOUT_MS,
    /** The exec plugin's bounds (tests shorten its timeout). */
    private readonly execOptions: ExecOptions = {},
  ) {}

  /**
   * The exec credential plugin requests are waiting for now, as messages name it (its command,
   * quoted); undefined when none is. A run that ends while this is set was held up by the plugin,
   * not by the API server.
   */
  get pendingPlugin(): string | undefined {
    return this.waitingForPlugin > 0 && this.plugin ? pluginName(this.plugin.command) : undefined;
  }

  /**
   * The kubeconfig's credentials for one request: client-node's KubeConfig for everything but an
   * exec plugin (token files refresh there), the plugin through kube/_exec-credential.ts (cached for
   * the process, one run at a time, bounded, stopped with `signal`).
   */
  private async credentials(signal: AbortSignal | undefined): Promise<Credentials> {
    const https: HttpsOptions = {};
    const { kc, plain } = this.view();
    await kc.applyToHTTPSOptions(https as never);
    if (plain) delete https.rejectUnauthorized;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(https.headers ?? {})) {
      if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : String(v);
    }
    if (https.auth) headers.Authorization = `Basic ${Buffer.from(https.auth).toString("base64")}`;
    const plugin = this.execPlugin();
    if (!plugin) return { headers, https, exec: undefined };
    this.waitingForPlugin++;
    let exec: ExecCredential;
    try {
      exec = await execCredential(plugin, this.clusterInfo(), this.execOptions, signal);
    } finally {
      this.waitingForPlugin--;
    }
    if (exec.token) headers.Authorization = `Bearer ${exec.token}`;
    if (exec.clientCertificateData && exec.clientKeyData) {
      https.cert = exec.clientCertificateData;
      https.key = exec.clientKeyData;
    }
    return { headers, https, exec };
  }

  /**
   * The current user's exec plugin, when kubectl would run it: not when the user also has a token
   * (or token file), a username or a client certificate, which kubectl uses instead.
   */
  private execPlugin(): ExecPlugin | undefined {
    if (this.plugin !== undefined) return this.plugin ?? undefined;
    const user = this.kc.getCurrentUser();
    const other = user?.token || user?.username || user?.certData || user?.certFile;
    this.plugin = (user && !other ? execPlugin(user.exec, user.name) : undefined) ?? null;
    return this.plugin ?? undefined;
  }

  /**
   * The cluster as a plugin with provideClusterInfo is told about it (a CA file was read into
   * caData when the kubeconfig was loaded: kube/config.ts).
   */
  private clusterInfo(): ExecClusterInfo {
    const c = this.kc.getCurrentCluster();
    return {
      server: this.server,
      tlsServerName: c?.tlsServerName,
      insecureSkipTlsVerify: c?.skipTLSVerify,
      certificateAuthorityData: c?.caData,
      proxyUrl: c?.proxyUrl,
    };
  }

  /**
   * The kubeconfig as client-node reads it for aicr: the file's own, or a view of it where
   *
   * - a plain `http://` server (what `kubectl proxy` serves) whose kubeconfig does not say
   *   insecure-skip-tls-verify has the flag: there is no TLS to configure, and kubectl accepts it.
   *   client-node refuses it (its own HTTPS agent, which aicr never uses, would not fit); the
   *   rejectUnauthorized it implies is dropped again (`plain`).
   * - the user has no `exec` (nor an auth-provider it would override): aicr runs the plugin itself,
   *   where client-node would run it again for every request.
   */
  private view(): { kc: KubeConfig; plain: boolean } {
    if (this.kcView) return this.kcView;
    const cluster = this.kc.getCurrentCluster();
    const user = this.kc.getCurrentUser();
    const plain = /^http:\/\//i.test(this.server) && Boolean(cluster) && !cluster?.skipTLSVerify;
    const exec = Boolean(user?.exec);
    if (!plain && !exec) {
      this.kcView = { kc: this.kc, plain };
      return this.kcView;
    }
    // Everything else (contexts, token files, certificates) is read from kc itself.
    const view = Object.create(this.kc) as KubeConfig;
    if (plain && cluster) view.getCurrentCluster = () => ({ ...cluster, skipTLSVerify: true });
    if (exec && user) view.getCurrentUser = () => ({ ...user, exec: undefined, authProvider: undefined });
    this.kcView = { kc: view, plain };
    return this.kcView;
  }

  /**
   * One session per client certificate: its TLS settings are fixed when it is made, so a certificate
   * is known first (an exec plugin's included), and a plugin's new certificate gets a new session.
   */
  private sessionFor(https: HttpsOptions): Bun.FetchSession {
    const text = (v: Buffer | string | undefined) => (v === undefined ? undefined : v.toString());
    const identity = `${text(https.cert) ?? ""}\0${text(https.key) ?? ""}`;
    if (this.session && this.sessionIdentity === identity) return this.session;
    const configured = this.kc.getCurrentCluster()?.proxyUrl;
    if (configured && !/^https?:\/\//i.test(configured)) {
      throw new AicrError(
        "INVALID_REQUEST",
        `the kubeconfig's proxy-url ${JSON.stringify(configured)} is not supported`,
        {
          remedy:
            "use an http:// or https:// proxy (aicr does not speak SOCKS), or run from a host that reaches the API server",
          context: { field: "proxy-url", value: configured },
        },
      );
    }
    // The scheme in any case, as kubectl reads it (HTTP://…): Bun's proxy option takes it in lower case.
    const proxy = configured?.replace(/^https?:/i, (scheme) => scheme.toLowerCase());
    // Idle connections of the previous certificate's session closed; requests in flight finish.
    this.session?.close();
    this.sessionIdentity = identity;
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

  /**
   * The raw answer; a non-2xx status is the caller's to read (streams) or `json` turns it into an
   * error. A 401 to a request made with an exec plugin's credential forgets that credential (kubectl
   * does, so the next request runs the plugin again) and is sent once more with the new one: the
   * apiserver acted on nothing it refused.
   */
  async send(method: string, path: string, o: RequestOptions = {}): Promise<Response> {
    const first = await this.credentials(o.signal);
    const res = await this.attempt(method, path, o, first);
    if (res.status !== 401 || !first.exec) return res;
    forgetExecCredential(first.exec);
    let again: Credentials;
    try {
      again = await this.credentials(o.signal);
    } catch (err) {
      await res.body?.cancel();
      throw err;
    }
    if (sameCredential(again.exec, first.exec)) return res;
    await res.body?.cancel();
    return this.attempt(method, path, o, again);
  }

  private async attempt(
    method: string,
    path: string,
    o: RequestOptions,
    creds: Credentials,
  ): Promise<Response> {
    const { headers, https } = creds;
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

const sameCredential = (a: ExecCredential | undefined, b: ExecCredential | undefined): boolean =>
  a?.token === b?.token &&
  a?.clientCertificateData === b?.clientCertificateData &&
  a?.clientKeyData === b?.clientKeyData;

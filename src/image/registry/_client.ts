/**
 * A registry session for one push (or one verify's reads): sends a request, and on 401 answers the challenge (Basic, or
 * a Bearer token for this push's scopes, cached per scope set) and sends it once more. Credentials
 * go only to the registry's own host, and over plain HTTP only to a loopback registry.
 */
import { AicrError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { type Challenge, challengeScopes, mergeScopes, parseChallenge } from "./_challenge.ts";
import { drain, type HttpRequest, makeFetch } from "./_http.ts";
import { isLoopback } from "./_reference.ts";
import { basicHeader, fetchToken } from "./_token.ts";
import { type Credentials, userOf } from "./credentials.ts";

export interface ClientOptions {
  /** As the operator wrote it, for messages. */
  registry: string;
  apiHost: string;
  repository: string;
  plainHttp: boolean;
  ca?: string | undefined;
  credentials?: Credentials | undefined;
  /** The token scopes this push needs (pull,push on the target; pull on a mount source). */
  scopes: string[];
  /** What the session does, for a refusal's message: push (default) or pull (aicr image verify). */
  access?: "push" | "pull" | undefined;
  signal: AbortSignal;
  log: Logger;
}

export class RegistryClient {
  readonly base: URL;
  private readonly fetch: ReturnType<typeof makeFetch>;
  private basic = false;
  private bearer: Challenge | undefined;
  private readonly tokens = new Map<string, string>();
  private readonly scopes: Set<string>;

  constructor(private readonly o: ClientOptions) {
    this.scopes = new Set(o.scopes);
    this.base = new URL(`${o.plainHttp ? "http" : "https"}://${o.apiHost}/`);
    this.fetch = makeFetch({ registry: o.registry, plainHttp: o.plainHttp, ca: o.ca, signal: o.signal });
  }

  /** A Location header (absolute or relative) as a URL. */
  resolve(location: string): URL {
    return new URL(location, this.base);
  }

  /** Sends the request; answers one auth challenge; a 401 after that or any 403 throws UNAUTHORIZED. */
  async send(target: string | URL, req: HttpRequest): Promise<Response> {
    const url = typeof target === "string" ? new URL(target, this.base) : target;
    this.o.log.debug("registry request", { method: req.method, path: url.pathname });
    let res = await this.fetch(url, await this.authorize(url, req, undefined));
    if (res.status === 401 && url.host === this.base.host) {
      const challenge = parseChallenge(res.headers.get("www-authenticate"));
      await drain(res);
      if (!this.answer(challenge)) throw this.denied(challenge);
      res = await this.fetch(url, await this.authorize(url, req, challenge));
      if (res.status === 401) {
        const again = parseChallenge(res.headers.get("www-authenticate"));
        await drain(res);
        throw this.denied(again);
      }
    }
    if (res.status === 403) {
      await drain(res);
      throw this.forbidden();
    }
    return res;
  }

  /** Learns the scheme a challenge asks for; false when there is nothing new to try. */
  private answer(c: Challenge | undefined): boolean {
    if (c?.scheme === "basic") {
      if (this.basic || !this.o.credentials || this.o.credentials.kind !== "basic") return false;
      this.basic = true;
      return true;
    }
    if (c?.scheme === "bearer") {
      const had = this.bearer !== undefined && this.tokens.has(this.scopeKey(c));
      // later requests ask for what this challenge wanted too, so they reuse one token
      for (const s of challengeScopes(c)) this.scopes.add(s);
      this.bearer = c;
      return !had || c.params.error === "invalid_token";
    }
    return false;
  }

  private scopeKey(c: Challenge | undefined): string {
    return mergeScopes([...this.scopes, ...(c ? challengeScopes(c) : [])]).join(" ");
  }

  private async authorize(url: URL, req: HttpRequest, fresh: Challenge | undefined): Promise<HttpRequest> {
    if (url.host !== this.base.host) return req;
    let value: string | undefined;
    const c = this.o.credentials;
    if (this.basic && c?.kind === "basic") {
      this.guard(url);
      value = basicHeader(c.username, c.password);
    } else if (this.bearer) {
      const key = this.scopeKey(fresh);
      if (fresh?.params.error === "invalid_token") this.tokens.delete(key);
      let token = this.tokens.get(key);
      if (!token) {
        token = await fetchToken({
          challenge: this.bearer,
          scopes: key.split(" ").filter(Boolean),
          credentials: c,
          registry: this.o.registry,
          fetch: this.fetch,
          guard: (u) => this.guard(u),
          rejected: (detail) => this.denied(undefined, detail),
        });
        this.tokens.set(key, token);
      }
      if (c) this.guard(url);
      value = `Bearer ${token}`;
    }
    return value ? { ...req, headers: { ...req.headers, authorization: value } } : req;
  }

  /** Credentials never cross the network in the clear: plain HTTP only to this machine. */
  private guard(url: URL): void {
    if (url.protocol === "https:" || isLoopback(url.host)) return;
    throw new AicrError(
      "INVALID_REQUEST",
      `Refusing to send credentials to ${JSON.stringify(url.host)} over plain HTTP`,
      {
        remedy:
          "serve the registry over HTTPS (drop --plain-http; --ca-file trusts a private CA), or push to a registry on this machine",
        context: { registry: this.o.registry },
      },
    );
  }

  private denied(c: Challenge | undefined, detail?: string): AicrError {
    const cred = this.o.credentials;
    const registry = JSON.stringify(this.o.registry);
    const login = `docker login ${this.o.registry}`;
    if (!cred) {
      return new AicrError(
        "UNAUTHORIZED",
        `The registry ${registry} requires authentication and no credentials were found`,
        {
          remedy: `run "${login}", or pass --username with the password on stdin (--password-stdin)`,
          context: { registry: this.o.registry },
        },
      );
    }
    if (c?.params.error === "insufficient_scope") return this.forbidden();
    const fix =
      cred.source === "--username"
        ? "check the user and the password piped to --password-stdin"
        : `run "${login}" again (the stored credentials came from ${cred.source})`;
    return new AicrError(
      "UNAUTHORIZED",
      `The registry ${registry} rejected the credentials of user ${JSON.stringify(userOf(cred))}${detail ? `: ${detail}` : ""}`,
      {
        remedy: `${fix}, or pass --username and --password-stdin for an account of this registry`,
        context: { registry: this.o.registry, user: userOf(cred), source: cred.source },
      },
    );
  }

  private forbidden(): AicrError {
    const user = userOf(this.o.credentials);
    if (this.o.access === "pull") {
      return new AicrError(
        "UNAUTHORIZED",
        `The registry ${JSON.stringify(this.o.registry)} refused user ${JSON.stringify(user)} permission to pull from ${JSON.stringify(this.o.repository)}`,
        {
          remedy: `ask the registry's administrator for pull access to ${this.o.repository}, or pass --username and --password-stdin for an account that has it`,
          context: { registry: this.o.registry, repository: this.o.repository, user },
        },
      );
    }
    return new AicrError(
      "UNAUTHORIZED",
      `The registry ${JSON.stringify(this.o.registry)} refused user ${JSON.stringify(user)} permission to push to ${JSON.stringify(this.o.repository)}`,
      {
        remedy: `ask the registry's administrator for push access to ${this.o.repository} (and pull access to any --mount-from repository), or push to a repository you own`,
        context: { registry: this.o.registry, repository: this.o.repository, user },
      },
    );
  }
}

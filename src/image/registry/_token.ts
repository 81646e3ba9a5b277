/**
 * The Bearer token flow of the distribution spec: GET the challenge's realm with service and scopes
 * (basic-authenticated when there are credentials), or POST an OAuth2 refresh-token grant for a
 * Docker identity token; the answer's `token` or `access_token` is the bearer.
 */
import { AicrError } from "../../core/errors.ts";
import type { Challenge } from "./_challenge.ts";
import { describeBody } from "./_errors.ts";
import type { HttpRequest } from "./_http.ts";
import type { Credentials } from "./credentials.ts";

export interface TokenRequest {
  challenge: Challenge;
  scopes: string[];
  credentials: Credentials | undefined;
  registry: string;
  fetch: (url: URL, req: HttpRequest) => Promise<Response>;
  /** Throws when credentials may not travel to this URL (plain HTTP off this machine). */
  guard: (url: URL) => void;
  /** Builds the error for rejected credentials (the client knows who and how). */
  rejected: (detail: string) => AicrError;
}

export const basicHeader = (username: string, password: string): string =>
  `Basic ${Buffer.from(`${username}:${password}`, "utf8").toString("base64")}`;

function realmOf(r: TokenRequest): URL {
  const realm = r.challenge.params.realm ?? "";
  try {
    return new URL(realm);
  } catch {
    throw new AicrError(
      "INTERNAL",
      `The registry ${JSON.stringify(r.registry)} sent a Bearer challenge with realm ${JSON.stringify(realm)}, which is not a URL`,
      {
        remedy: "the registry's token auth is misconfigured; report it to its administrator",
        context: { registry: r.registry },
      },
    );
  }
}

export async function fetchToken(r: TokenRequest): Promise<string> {
  const url = realmOf(r);
  const service = r.challenge.params.service;
  const c = r.credentials;
  let req: HttpRequest;
  if (c) r.guard(url);
  if (c?.kind === "identity-token") {
    const form = new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: c.token,
      client_id: "aicr",
    });
    if (service) form.set("service", service);
    if (r.scopes.length) form.set("scope", r.scopes.join(" "));
    req = {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form.toString(),
    };
  } else {
    if (service) url.searchParams.set("service", service);
    for (const s of r.scopes) url.searchParams.append("scope", s);
    if (c?.username) url.searchParams.set("account", c.username);
    req = { method: "GET", headers: c ? { authorization: basicHeader(c.username, c.password) } : {} };
  }
  const res = await r.fetch(url, req);
  const text = await res.text().catch(() => "");
  if (res.status === 401 || res.status === 403)
    throw r.rejected(`the token service answered HTTP ${res.status}`);
  if (!res.ok) {
    throw new AicrError(
      res.status >= 500 ? "SERVICE_UNAVAILABLE" : "INTERNAL",
      `Getting a token for ${JSON.stringify(r.registry)} from ${url.origin}${url.pathname} failed: HTTP ${res.status} ${describeBody(text)}`,
      {
        remedy: "retry; if it persists, the registry's token service is failing — tell its administrator",
        context: {
          registry: r.registry,
          status: res.status,
          retryable: res.status >= 500 || res.status === 429,
        },
      },
    );
  }
  let body: { token?: unknown; access_token?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // handled below as a missing token
  }
  const token = typeof body.token === "string" && body.token ? body.token : body.access_token;
  if (typeof token !== "string" || !token) {
    throw new AicrError(
      "INTERNAL",
      `The token service of ${JSON.stringify(r.registry)} answered without a token`,
      {
        remedy: "the registry's token auth is misconfigured; report it to its administrator",
        context: { registry: r.registry },
      },
    );
  }
  return token;
}

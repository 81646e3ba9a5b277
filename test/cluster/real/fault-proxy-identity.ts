/**
 * Who a request to the fault proxy comes from: the credential it carries (a client certificate the
 * proxy verified, a bearer token, or nothing), how that is forwarded to kube-apiserver, and the
 * identity the request log records — the same user/groups the fake's pipeline would log.
 */
import type { TLSSocket } from "node:tls";

export interface Identity {
  user: string;
  groups: string[];
}

export type Credential =
  | { kind: "certificate"; user: string; groups: string[] }
  | { kind: "token"; token: string }
  | { kind: "anonymous" };

export type Identify = (token: string) => Identity | undefined;

const AUTHENTICATED = "system:authenticated";
const ANONYMOUS: Identity = { user: "system:anonymous", groups: ["system:unauthenticated"] };

/** A certificate presented but not signed by the CA: the apiserver's VerifyClientCertIfGiven refuses it. */
export function presentedButUnverified(socket: TLSSocket): boolean {
  const cert = socket.getPeerCertificate();
  return !socket.authorized && !!cert && Object.keys(cert).length > 0;
}

/** The verified client certificate's subject: CN is the user, each O a group (as x509 authentication). */
export function certificateUser(socket: TLSSocket): { user: string; groups: string[] } | undefined {
  if (!socket.authorized) return undefined;
  const subject = socket.getPeerCertificate()?.subject as unknown as
    | Record<string, string | string[]>
    | undefined;
  const cn = subject?.CN;
  if (!cn) return undefined;
  const o = subject.O;
  return { user: String(cn), groups: o === undefined ? [] : Array.isArray(o) ? o : [o] };
}

/** As kube-apiserver: a verified client certificate wins over a bearer token. */
export function credentialOf(
  cert: { user: string; groups: string[] } | undefined,
  authorization: string | undefined,
): Credential {
  if (cert) return { kind: "certificate", ...cert };
  const m = authorization?.match(/^Bearer\s+(\S+)\s*$/i);
  if (m) return { kind: "token", token: m[1]! };
  return { kind: "anonymous" };
}

/** The payload of a JWT, read without verifying it (the apiserver verifies). */
function jwtClaims(token: string): Record<string, unknown> | undefined {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8"));
    return claims && typeof claims === "object" ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A ServiceAccount token's user and groups, from its `sub` and `kubernetes.io` claims. */
export function serviceAccountIdentity(token: string): Identity | undefined {
  const claims = jwtClaims(token);
  const sub = typeof claims?.sub === "string" ? claims.sub : undefined;
  const m = sub?.match(/^system:serviceaccount:([^:]+):([^:]+)$/);
  if (!m) return undefined;
  const k8s = claims?.["kubernetes.io"] as { namespace?: unknown } | undefined;
  const ns = typeof k8s?.namespace === "string" ? k8s.namespace : m[1]!;
  return { user: sub!, groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`] };
}

const withAuthenticated = (groups: string[]) => [...new Set([...groups, AUTHENTICATED])];

/**
 * The identity the log records. Like the fake: an unknown token is "" with no groups (the apiserver
 * answers 401); an accepted impersonation logs the impersonated user with the requested groups.
 */
export function logIdentity(
  cred: Credential,
  identify: Identify | undefined,
  impersonate: { user?: string | undefined; groups: string[] },
  status: number,
): Identity {
  let who: Identity;
  if (cred.kind === "certificate") who = { user: cred.user, groups: withAuthenticated(cred.groups) };
  else if (cred.kind === "token") {
    const found = identify?.(cred.token) ?? serviceAccountIdentity(cred.token);
    who = found ? { user: found.user, groups: withAuthenticated(found.groups) } : { user: "", groups: [] };
  } else who = ANONYMOUS;
  if (impersonate.user && status !== 401 && status !== 403) {
    return { user: impersonate.user, groups: withAuthenticated(impersonate.groups) };
  }
  return who;
}

/** Headers that belong to one hop, never forwarded (RFC 9110 §7.6.1), plus what the proxy sets itself. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
]);

export type HeaderMap = Record<string, string | string[]>;

/** Groups raw header pairs by lower-case name, keeping repeated headers as separate lines. */
function collect(raw: string[], skip: (name: string) => boolean): HeaderMap {
  const out: Record<string, string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (skip(name)) continue;
    const values = out[name] ?? [];
    values.push(raw[i + 1]!);
    out[name] = values;
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v.length === 1 ? v[0]! : v]));
}

function connectionTokens(raw: string[]): Set<string> {
  const tokens = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== "connection") continue;
    for (const t of raw[i + 1]!.split(",")) tokens.add(t.trim().toLowerCase());
  }
  return tokens;
}

/**
 * The request headers sent upstream: hop-by-hop headers and every client X-Remote-* header dropped (a
 * client never chooses its front-proxy identity); for a certificate user, X-Remote-User and one
 * X-Remote-Group line per group (system:authenticated is the apiserver's to add) instead of its token.
 */
export function upstreamRequestHeaders(raw: string[], cred: Credential): HeaderMap {
  const named = connectionTokens(raw);
  const headers = collect(
    raw,
    (n) =>
      HOP_BY_HOP.has(n) ||
      named.has(n) ||
      n.startsWith("x-remote-") ||
      (cred.kind === "certificate" && n === "authorization"),
  );
  if (cred.kind === "certificate") {
    headers["X-Remote-User"] = cred.user;
    const groups = cred.groups.filter((g) => g !== AUTHENTICATED);
    if (groups.length > 0) headers["X-Remote-Group"] = groups;
  }
  return headers;
}

/** The response headers sent back: the apiserver's, less hop-by-hop ones (content-length is kept). */
export function downstreamResponseHeaders(raw: string[]): HeaderMap {
  const named = connectionTokens(raw);
  return collect(raw, (n) => (HOP_BY_HOP.has(n) && n !== "content-length") || named.has(n));
}

/**
 * Authentication (bearer tokens, client certificates, ServiceAccount tokens) and impersonation,
 * producing the UserInfo the RBAC evaluator takes.
 */
import { ApiStatusError, forbidden, unauthorized } from "./errors.ts";
import { resource } from "./resources.ts";
import { authorize, forbiddenMessage, type RbacSnapshot, type UserInfo } from "./semantics/rbac.ts";
import type { Store } from "./store.ts";

export type { UserInfo } from "./semantics/rbac.ts";

export const ANONYMOUS: UserInfo = { username: "system:anonymous", groups: ["system:unauthenticated"] };
export const ADMIN: UserInfo = { username: "admin", groups: ["system:masters", "system:authenticated"] };

export function serviceAccountUser(namespace: string, name: string): UserInfo {
  return {
    username: `system:serviceaccount:${namespace}:${name}`,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
  };
}

function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64url");
}

export class Authenticator {
  private readonly users = new Map<string, UserInfo>();
  private readonly tokens = new Map<string, UserInfo>();
  // Simplification: ServiceAccount tokens are opaque random strings, not signed JWTs.
  private readonly saTokens = new Map<string, { namespace: string; name: string; uid?: string }>();

  constructor(private readonly store: Store) {
    this.addUser(ADMIN.username, ADMIN.groups);
  }

  /** Registers a user (system:authenticated is added) and returns its bearer token. */
  addUser(username: string, groups: string[] = []): string {
    const user = { username, groups: [...new Set([...groups, "system:authenticated"])] };
    this.users.set(username, user);
    for (const [t, u] of this.tokens) {
      if (u.username !== username) continue;
      this.tokens.set(t, user);
      return t;
    }
    const token = randomToken();
    this.tokens.set(token, user);
    return token;
  }

  user(username: string): UserInfo | undefined {
    return this.users.get(username);
  }

  tokenFor(username: string): string | undefined {
    for (const [t, u] of this.tokens) if (u.username === username) return t;
    return undefined;
  }

  tokenForServiceAccount(namespace: string, name: string): string {
    const uid = this.store.find(resource("serviceaccounts"), namespace, name)?.metadata.uid;
    for (const [t, sa] of this.saTokens) {
      if (sa.namespace === namespace && sa.name === name && (sa.uid === undefined || sa.uid === uid))
        return t;
    }
    const token = randomToken();
    this.saTokens.set(token, uid ? { namespace, name, uid } : { namespace, name });
    return token;
  }

  /**
   * Identity for a request; `certUser` comes from a verified client certificate, which wins over
   * a bearer token as in the apiserver's authenticator order. Throws 401 for an unknown token.
   */
  authenticate(authorization: string | null, certUser?: UserInfo): UserInfo {
    if (certUser)
      return {
        username: certUser.username,
        groups: [...new Set([...certUser.groups, "system:authenticated"])],
      };
    const bearer = authorization?.match(/^Bearer\s+(\S+)$/i)?.[1];
    if (!bearer) return ANONYMOUS;
    const user = this.tokens.get(bearer);
    if (user) return user;
    const sa = this.saTokens.get(bearer);
    const live = sa && this.store.find(resource("serviceaccounts"), sa.namespace, sa.name);
    // As with bound tokens, a token stops working once its ServiceAccount is deleted or recreated.
    if (!sa || !live) throw unauthorized();
    sa.uid ??= live.metadata.uid;
    if (sa.uid !== live.metadata.uid) throw unauthorized();
    return serviceAccountUser(sa.namespace, sa.name);
  }
}

/**
 * Applies Impersonate-User / Impersonate-Group after checking the `impersonate` verb.
 * Simplification: Impersonate-Uid and Impersonate-Extra-* are ignored.
 */
export function impersonate(user: UserInfo, headers: Headers, rbac: RbacSnapshot): UserInfo {
  const target = headers.get("impersonate-user");
  const groups = headers.get("impersonate-group");
  if (!target) {
    if (groups)
      throw forbidden(undefined, "", "requested impersonation of groups without impersonating a user");
    return user;
  }
  const check = (resourceName: string, name: string, namespace?: string) => {
    const attrs = {
      verb: "impersonate",
      group: "",
      resource: resourceName,
      name,
      ...(namespace ? { namespace } : {}),
    };
    if (!authorize(user, attrs, rbac).allowed) {
      throw new ApiStatusError(403, "Forbidden", forbiddenMessage(user, attrs), { name, kind: resourceName });
    }
  };
  const sa = target.match(/^system:serviceaccount:([^:]+):([^:]+)$/);
  if (sa) check("serviceaccounts", sa[2]!, sa[1]!);
  else check("users", target);
  const requested = (groups ?? "")
    .split(",")
    .map((g) => g.trim())
    .filter(Boolean);
  for (const g of requested) check("groups", g);
  if (sa && requested.length === 0) return serviceAccountUser(sa[1]!, sa[2]!);
  return { username: target, groups: [...new Set([...requested, "system:authenticated"])] };
}

/**
 * Authentication (bearer tokens, client certificates, ServiceAccount tokens) and impersonation,
 * producing the UserInfo the RBAC evaluator takes.
 */
import { ApiStatusError, badRequest, forbidden, unauthorized } from "./errors.ts";
import { resource } from "./resources.ts";
import { validateDns1123Label, validateDns1123Subdomain } from "./semantics/names.ts";
import {
  type Attributes,
  authorize,
  forbiddenMessage,
  type RbacSnapshot,
  type ResourceAttributes,
  type UserInfo,
} from "./semantics/rbac.ts";
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
  /** Per requestor, the impersonation mode that last succeeded: tried first next time (the apiserver's modeIndexCache). */
  readonly impersonationModes = new Map<string, number>();

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

/** A Forbidden Status as the apiserver's responsewriters.ForbiddenStatusError builds it. */
function forbiddenFor(user: UserInfo, attrs: ResourceAttributes, reason?: string): ApiStatusError {
  const message = forbiddenMessage(user, attrs, undefined, undefined, reason);
  return new ApiStatusError(403, "Forbidden", message, {
    ...(attrs.name ? { name: attrs.name } : {}),
    ...(attrs.group ? { group: attrs.group } : {}),
    kind: attrs.resource,
  });
}

const goString = (s: string) => JSON.stringify(s);
const goStrings = (xs: string[]) =>
  xs.length === 0 ? "[]string(nil)" : `[]string{${xs.map(goString).join(", ")}}`;

/** serviceaccount.SplitUsername: system:serviceaccount:<namespace>:<name>, both valid names. */
function serviceAccountName(username: string): { namespace: string; name: string } | undefined {
  const m = username.match(/^system:serviceaccount:([^:]+):([^:]+)$/);
  if (!m || validateDns1123Label(m[1]!).length > 0 || validateDns1123Subdomain(m[2]!).length > 0)
    return undefined;
  return { namespace: m[1]!, name: m[2]! };
}

function nodeName(username: string): string | undefined {
  const m = username.match(/^system:node:(.+)$/);
  return m && validateDns1123Subdomain(m[1]!).length === 0 ? m[1] : undefined;
}

interface Wanted {
  name: string;
  groups: string[];
}

/**
 * One impersonation mode of k8s.io/apiserver's constrained impersonation filter (KEP-5284, on in 1.36):
 * undefined when the mode does not apply to the wanted user, else the impersonated user or the
 * Forbidden error it ends with.
 */
type Mode = (
  user: UserInfo,
  wanted: Wanted,
  request: Attributes,
  rbac: RbacSnapshot,
) => UserInfo | ApiStatusError | undefined;

const AUTHN_GROUP = "authentication.k8s.io";

function withAuthenticated(name: string, groups: string[]): UserInfo {
  if (name === ANONYMOUS.username)
    return { username: name, groups: [...new Set([...groups, "system:unauthenticated"])] };
  if (groups.includes("system:unauthenticated")) return { username: name, groups };
  return { username: name, groups: [...new Set([...groups, "system:authenticated"])] };
}

/** The checks of impersonationModeState: the user name (as users, nodes or serviceaccounts), then each group. */
function modeState(
  verb: string,
  constrained: boolean,
  user: UserInfo,
  wanted: Wanted,
  rbac: RbacSnapshot,
): UserInfo | ApiStatusError {
  const group = constrained ? AUTHN_GROUP : "";
  const check = (attrs: ResourceAttributes, reason?: string): ApiStatusError | undefined => {
    if (reason !== undefined) return forbiddenFor(user, attrs, reason);
    return authorize(user, attrs, rbac).allowed ? undefined : forbiddenFor(user, attrs);
  };
  let groups = wanted.groups;
  const nameAttrs: ResourceAttributes = { verb, group, resource: "users", name: wanted.name };
  const node = constrained ? nodeName(wanted.name) : undefined;
  if (node !== undefined) {
    nameAttrs.resource = "nodes";
    nameAttrs.name = node;
    groups = ["system:nodes"];
  }
  const sa = serviceAccountName(wanted.name);
  if (sa) {
    nameAttrs.resource = "serviceaccounts";
    nameAttrs.namespace = sa.namespace;
    nameAttrs.name = sa.name;
    if (wanted.groups.length === 0)
      groups = serviceAccountUser(sa.namespace, sa.name).groups.filter((g) => g !== "system:authenticated");
  }
  const denied = check(nameAttrs);
  if (denied) return denied;
  if (wanted.groups.length > 0) {
    const groupAttrs: ResourceAttributes = { verb, group, resource: "groups" };
    if (constrained && wanted.groups.includes(""))
      return check(groupAttrs, "impersonating the empty string group is not allowed")!;
    if (constrained && wanted.groups.includes("system:masters"))
      return check(
        { ...groupAttrs, name: "system:masters" },
        "impersonating the system:masters group is not allowed",
      )!;
    const all = constrained && wanted.groups.length >= 4 && !check({ ...groupAttrs, name: "*" });
    if (!all)
      for (const g of wanted.groups) {
        const d = check({ ...groupAttrs, name: g });
        if (d) return d;
      }
  }
  return withAuthenticated(wanted.name, groups);
}

function constrainedMode(mode: string, applies: (w: Wanted) => boolean): Mode {
  return (user, wanted, request, rbac) => {
    if (!applies(wanted)) return undefined;
    const on = { ...request, verb: `impersonate-on:${mode}:${request.verb}` };
    if (!authorize(user, on, rbac).allowed) {
      if (!("resource" in on)) return new ApiStatusError(403, "Forbidden", forbiddenMessage(user, on), {});
      return forbiddenFor(user, on);
    }
    return modeState(`impersonate:${mode}`, true, user, wanted, rbac);
  };
}

const onlyName = (w: Wanted) => w.groups.length === 0;

/** In the filter's order; associated-node never applies here (no ServiceAccount token carries a node). */
const MODES: Mode[] = [
  constrainedMode("arbitrary-node", (w) => onlyName(w) && nodeName(w.name) !== undefined),
  constrainedMode("serviceaccount", (w) => onlyName(w) && serviceAccountName(w.name) !== undefined),
  constrainedMode(
    "user-info",
    (w) => nodeName(w.name) === undefined && serviceAccountName(w.name) === undefined,
  ),
  (user, wanted, _request, rbac) => modeState("impersonate", false, user, wanted, rbac),
];

/**
 * Applies Impersonate-User / Impersonate-Group as kube-apiserver 1.36 does: constrained impersonation
 * (`impersonate-on:<mode>:<verb>` on the request, then `impersonate:<mode>` on the user, node or
 * ServiceAccount in authentication.k8s.io) tried before legacy impersonation (`impersonate` on users,
 * serviceaccounts and groups in the core group); the first mode that succeeds wins, else the first error.
 * Simplification: Impersonate-Uid and Impersonate-Extra-* are not impersonated (only reported in the
 * BadRequest below), and the short-lived caches of successful impersonations are not kept.
 */
export function impersonate(
  user: UserInfo,
  headers: Headers,
  rbac: RbacSnapshot,
  request: Attributes,
  modeCache: Map<string, number> = new Map(),
): UserInfo {
  const target = headers.get("impersonate-user") ?? "";
  const groups = (headers.get("impersonate-group") ?? "")
    .split(",")
    .map((g) => g.trim())
    .filter(Boolean);
  const uid = headers.get("impersonate-uid") ?? "";
  if (!target) {
    if (groups.length > 0 || uid)
      throw badRequest(
        `requested &user.DefaultInfo{Name:"", UID:${goString(uid)}, Groups:${goStrings(groups)}, Extra:map[string][]string(nil)} without impersonating a user name`,
      );
    return user;
  }
  const wanted = { name: target, groups };
  const cached = modeCache.get(user.username);
  const order =
    cached === undefined
      ? MODES.map((_, i) => i)
      : [cached, ...MODES.map((_, i) => i).filter((i) => i !== cached)];
  let first: ApiStatusError | undefined;
  for (const i of order) {
    const out = MODES[i]!(user, wanted, request, rbac);
    if (out === undefined) continue;
    if (out instanceof ApiStatusError) {
      first ??= out;
      continue;
    }
    modeCache.set(user.username, i);
    return out;
  }
  throw first ?? forbidden(undefined, "", "all impersonation modes failed");
}

/** State shared by the request pipeline of one fake cluster. */
import type { Authenticator } from "./auth.ts";
import type { FaultEffect, Faults } from "./faults.ts";
import type { RequestInfo } from "./request-info.ts";
import type { RequestLog } from "./request-log.ts";
import { resource } from "./resources.ts";
import type { RbacSnapshot, UserInfo } from "./semantics/rbac.ts";
import type { Store } from "./store.ts";

export interface ClusterContext {
  store: Store;
  auth: Authenticator;
  faults: Faults;
  log: RequestLog;
}

export interface RequestContext {
  user: UserInfo;
  info: RequestInfo;
  url: URL;
  effects: FaultEffect;
  /** Aborts when the client goes away (ends watch and log streams). */
  signal: AbortSignal;
  /** Notes in the request log that a fault shaped the answer. */
  markFault(name: string): void;
  /** Streaming answers report their status here when they start. */
  userAgent: string;
}

const RBAC_KINDS = ["roles", "rolebindings", "clusterroles", "clusterrolebindings"] as const;
const rbacCache = new WeakMap<Store, { key: string; snapshot: RbacSnapshot }>();

/**
 * Every Role, ClusterRole and binding, as the authorizer reads them. Rebuilt only when one of those
 * tables changed: the authorizer runs on every request, and copying every RBAC object each time made
 * the fake, not the client under test, the bottleneck of concurrent runs. Read-only for callers.
 */
export function rbacSnapshot(store: Store): RbacSnapshot {
  const key = RBAC_KINDS.map((k) => store.tableVersion(resource(k))).join(",");
  const hit = rbacCache.get(store);
  if (hit?.key === key) return hit.snapshot;
  const snapshot = {
    roles: store.storedObjects(resource("roles")),
    roleBindings: store.storedObjects(resource("rolebindings")),
    clusterRoles: store.storedObjects(resource("clusterroles")),
    clusterRoleBindings: store.storedObjects(resource("clusterrolebindings")),
  } as unknown as RbacSnapshot;
  rbacCache.set(store, { key, snapshot });
  return snapshot;
}

/**
 * Every request's way through the fake apiserver: authentication, impersonation, authorization,
 * faults, the msw handlers, the request log.
 */
import { getResponse, type RequestHandler } from "msw";
import { impersonate, type UserInfo } from "./auth.ts";
import type { ClusterContext, RequestContext } from "./context.ts";
import { rbacSnapshot } from "./context.ts";
import { ApiStatusError } from "./errors.ts";
import { type FaultEffect, mergeEffects } from "./faults.ts";
import type { ConnectionInfo } from "./front.ts";
import { errorResponse, statusError } from "./http-util.ts";
import { type RequestInfo, requestInfo } from "./request-info.ts";
import type { LoggedRequest } from "./request-log.ts";
import { type Attributes, authorize, forbiddenMessage } from "./semantics/rbac.ts";

export const REQUEST_ID_HEADER = "x-aicr-fake-request-id";

function attributesFor(info: RequestInfo): Attributes {
  if (!info.isResourceRequest) return { verb: info.verb, path: info.path };
  const a: Attributes = { verb: info.verb, group: info.group, resource: info.resource };
  if (info.subresource) a.subresource = info.subresource;
  if (info.name) a.name = info.name;
  const ns = info.resource === "namespaces" && info.name ? info.name : info.namespace;
  if (ns) a.namespace = ns;
  return a;
}

async function bodyForLog(req: Request): Promise<unknown> {
  if (req.method === "GET" || req.method === "HEAD") return undefined;
  const text = await req.clone().text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Watch faults count only watches; the resume fault only watches that carry a resourceVersion. */
function faultApplies(f: FaultEffect, info: RequestInfo, url: URL): boolean {
  const watchOnly = f.cutWatchAfterEvents !== undefined || f.watchGoneOnResume;
  if (watchOnly && info.verb !== "watch") return false;
  const rv = url.searchParams.get("resourceVersion");
  if (f.watchGoneOnResume && (!rv || rv === "0")) return false;
  return true;
}

export class Pipeline {
  readonly contexts = new Map<string, RequestContext>();
  handlers: RequestHandler[] = [];

  constructor(private readonly c: ClusterContext) {}

  contextOf = (req: Request): RequestContext => {
    const rc = this.contexts.get(req.headers.get(REQUEST_ID_HEADER) ?? "");
    if (!rc) throw new Error("request reached a handler without a context");
    return rc;
  };

  async handle(req: Request, conn: ConnectionInfo | undefined): Promise<Response> {
    const url = new URL(req.url);
    const info = requestInfo(req.method, url);
    const faults: string[] = [];
    let entry: LoggedRequest | undefined;
    // Streams mark faults after the entry was written (cut watch); keep the entry current.
    const markFault = (f: string) => {
      faults.push(f);
      if (entry) entry.fault = faults.join(", ");
    };
    let user: UserInfo = { username: "", groups: [] };
    const body = await bodyForLog(req);
    let effects = mergeEffects([]);
    let response: Response;
    try {
      user = this.c.auth.authenticate(req.headers.get("authorization"), conn?.cert);
      const rbac = rbacSnapshot(this.c.store);
      const attrs = attributesFor(info);
      user = impersonate(user, req.headers, rbac, attrs, this.c.auth.impersonationModes);
      const decision = authorize(user, attrs, rbac);
      if (!decision.allowed) {
        throw new ApiStatusError(
          403,
          "Forbidden",
          forbiddenMessage(user, attrs, undefined, undefined, decision.reason || undefined),
          {
            ...("resource" in attrs
              ? { kind: attrs.resource, ...(attrs.group ? { group: attrs.group } : {}) }
              : {}),
            ...(info.name ? { name: info.name } : {}),
          },
        );
      }
      effects = mergeEffects(this.c.faults.take(req.method, url.pathname, (f) => faultApplies(f, info, url)));
      if (effects.latencyMs) await Bun.sleep(effects.latencyMs);
      if (effects.holdUntil) await effects.holdUntil.catch(() => {});
      if (effects.status) {
        faults.push(`status ${effects.status}`);
        throw statusError(effects.status, effects.message, effects.retryAfterSeconds);
      }
      response = await this.dispatch(req, url, info, user, effects, markFault);
    } catch (e) {
      response = errorResponse(e);
    }
    if (effects.dropAfterCommit) {
      faults.push("connection dropped after commit");
      conn?.drop();
    }
    const query = Object.fromEntries(url.searchParams);
    entry = this.c.log.record({
      user: user.username,
      groups: user.groups,
      verb: info.verb,
      method: req.method,
      path: url.pathname,
      query,
      ...(body === undefined ? {} : { body }),
      status: response.status,
      ...(faults.length > 0 ? { fault: faults.join(", ") } : {}),
    });
    return response;
  }

  private async dispatch(
    req: Request,
    url: URL,
    info: RequestInfo,
    user: UserInfo,
    effects: RequestContext["effects"],
    markFault: (f: string) => void,
  ): Promise<Response> {
    const id = crypto.randomUUID();
    const rc: RequestContext = {
      user,
      info,
      url,
      effects,
      signal: req.signal,
      markFault,
      userAgent: req.headers.get("user-agent") ?? "",
    };
    this.contexts.set(id, rc);
    try {
      const headers = new Headers(req.headers);
      headers.set(REQUEST_ID_HEADER, id);
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const fwd = new Request(req.url, {
        method: req.method,
        headers,
        ...(hasBody ? { body: await req.arrayBuffer() } : {}),
        signal: req.signal,
      });
      const res = await getResponse(this.handlers, fwd);
      return (
        res ??
        errorResponse(
          new ApiStatusError(404, "NotFound", "the server could not find the requested resource", {}),
        )
      );
    } finally {
      this.contexts.delete(id);
    }
  }
}

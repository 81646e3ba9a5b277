/** The msw request handlers of the fake apiserver (served over a loopback socket, see server.ts). */
import { http } from "msw";
import type { ClusterContext, RequestContext } from "./context.ts";
import { apiGroup, apiGroupList, apiVersions, resourceList, VERSION_INFO } from "./discovery.ts";
import { methodNotAllowed } from "./errors.ts";
import { errorResponse, json } from "./http-util.ts";
import { serveLog } from "./logs-http.ts";
import { findResource, RESOURCES } from "./resources.ts";
import { resourceNotFound, serveRest } from "./rest.ts";
import { serveReview } from "./reviews.ts";
import { serveWatch } from "./watch-http.ts";

type Serve = (rc: RequestContext, req: Request) => Response | Promise<Response>;

export function clusterHandlers(c: ClusterContext, contextOf: (req: Request) => RequestContext) {
  const wrap =
    (serve: Serve) =>
    async ({ request }: { request: Request }) => {
      try {
        return await serve(contextOf(request), request);
      } catch (e) {
        return errorResponse(e);
      }
    };
  const api: Serve = (rc, req) => serveApi(c, rc, req);
  // Simplification: no /openapi/v2 or /openapi/v3 handlers; kubectl create/apply need --validate=false.
  // The resource handlers first: msw tries handlers in order, parsing each request once per handler.
  return [
    http.all("*/api/*", wrap(api)),
    http.all("*/apis/*", wrap(api)),
    http.get(
      "*/version",
      wrap(() => json(VERSION_INFO)),
    ),
    http.get(
      "*/api",
      wrap((rc) => json(apiVersions(rc.url.host))),
    ),
    http.get(
      "*/apis",
      wrap(() => json(apiGroupList())),
    ),
  ];
}

/** The apiserver's answer for a path no handler serves (an unknown group or version): Go's plain 404. */
function pageNotFound(): Response {
  const text = "404 page not found\n";
  return new Response(text, {
    status: 404,
    headers: {
      "content-type": "text/plain; charset=utf-8",
      "x-content-type-options": "nosniff",
      "content-length": String(text.length),
    },
  });
}

const servesGroupVersion = (group: string, version: string) =>
  RESOURCES.some((r) => r.group === group && r.version === version);

function serveApi(c: ClusterContext, rc: RequestContext, req: Request): Response | Promise<Response> {
  const { info } = rc;
  if (!info.isResourceRequest) return discovery(rc);
  // /apis/<group>/<version> has a handler per served group version; /api/<version> is always routed.
  if (info.apiPrefix === "apis" && !servesGroupVersion(info.group, info.version)) return pageNotFound();
  const r = findResource(info.group, info.version, info.resource);
  if (!r) throw resourceNotFound();
  const clusterScopedUnderNamespace =
    !r.namespaced && info.namespace !== undefined && r.plural !== "namespaces";
  if (clusterScopedUnderNamespace) throw resourceNotFound();
  if (info.subresource && !r.subresources.includes(info.subresource)) throw resourceNotFound();
  if (!r.stored) return serveReview(c, rc, r, req);
  if (info.subresource === "log") {
    if (info.verb !== "get") throw methodNotAllowed();
    return serveLog(c, rc);
  }
  // Simplification: pods/exec is only known to discovery and RBAC; the fake cannot run commands.
  if (info.subresource === "exec") throw resourceNotFound();
  if (info.verb === "watch") return serveWatch(c, rc, r);
  return serveRest(c, rc, r, req);
}

function discovery(rc: RequestContext): Response {
  const parts = rc.info.path.split("/").filter(Boolean);
  let doc: unknown;
  if (parts[0] === "api" && parts.length === 2) doc = resourceList("", parts[1]!);
  if (parts[0] === "apis" && parts.length === 2) doc = apiGroup(parts[1]!);
  if (parts[0] === "apis" && parts.length === 3) doc = resourceList(parts[1]!, parts[2]!);
  if (!doc) return pageNotFound();
  if (rc.info.verb !== "get") throw methodNotAllowed();
  return json(doc);
}

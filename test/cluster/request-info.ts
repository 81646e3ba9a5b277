/** Parses a request path the way kube-apiserver's RequestInfoFactory does. */

export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  verb: string;
  apiPrefix?: "api" | "apis";
  group: string;
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
}

const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

export function requestInfo(method: string, url: URL): RequestInfo {
  const path = url.pathname.replace(/\/+$/, "") || "/";
  const parts = path.split("/").filter(Boolean);
  const base: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    group: "",
    version: "",
    resource: "",
  };
  const prefix = parts[0];
  if (prefix !== "api" && prefix !== "apis") return nonResource(base, method);
  let rest = parts.slice(1);
  let group = "";
  if (prefix === "apis") {
    if (rest.length < 2) return nonResource(base, method);
    group = rest[0]!;
    rest = rest.slice(1);
  }
  if (rest.length < 2) return nonResource(base, method);
  const version = rest[0]!;
  rest = rest.slice(1);
  const info: RequestInfo = { ...base, isResourceRequest: true, apiPrefix: prefix, group, version };
  if (rest[0] === "namespaces" && rest.length > 1) {
    info.namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  }
  info.resource = rest[0] ?? "";
  if (rest.length > 1) info.name = rest[1];
  if (rest.length > 2) info.subresource = rest[2];
  if (rest.length > 3) info.isResourceRequest = false;
  info.verb = resourceVerb(method, info, url.searchParams);
  return info;
}

function nonResource(info: RequestInfo, method: string): RequestInfo {
  info.verb = method === "HEAD" ? "get" : method.toLowerCase();
  return info;
}

function resourceVerb(method: string, info: RequestInfo, q: URLSearchParams): string {
  switch (method) {
    case "GET":
    case "HEAD": {
      const watch = q.get("watch");
      if (watch === "true" || watch === "1") return "watch";
      return info.name ? "get" : "list";
    }
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return info.name ? "delete" : "deletecollection";
    default:
      return method.toLowerCase();
  }
}

export const MUTATING_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);

/** The REST verbs on stored resources: get, list, create, update, patch, delete, deletecollection. */
import type { ClusterContext, RequestContext } from "./context.ts";
import { rbacSnapshot } from "./context.ts";
import { ApiStatusError, badRequest, forbidden, methodNotAllowed, notFound } from "./errors.ts";
import { json, readBody, successStatus, writeMediaTypes } from "./http-util.ts";
import { checkResourceVersion, validateListOptions } from "./list-options.ts";
import type { DeleteOptions, KObject, PropagationPolicy } from "./objects.ts";
import { applyPatch } from "./patch-http.ts";
import { apiVersionOf, type ResourceType } from "./resources.ts";
import { trackUpdate } from "./semantics/patch.ts";
import { checkBindingWrite, checkRoleWrite } from "./semantics/rbac.ts";

export async function serveRest(
  c: ClusterContext,
  rc: RequestContext,
  r: ResourceType,
  req: Request,
): Promise<Response> {
  const { info, url } = rc;
  const q = url.searchParams;
  const ns = r.namespaced ? info.namespace : undefined;
  const dryRun = q.getAll("dryRun").includes("All");
  switch (info.verb) {
    case "get":
      return json(c.store.get(r, ns, info.name!));
    case "list":
      validateListOptions(q, false);
      checkResourceVersion(q, false);
      return json(listBody(c, r, ns, q));
    case "create": {
      if (info.name) throw methodNotAllowed();
      const obj = objectBody(await readBody(req, undefined, writeMediaTypes()));
      if (r.namespaced) {
        obj.metadata.namespace ??= ns;
        if (obj.metadata.namespace !== ns) {
          throw badRequest(
            "the namespace of the provided object does not match the namespace sent on the request",
          );
        }
      }
      checkRbacWrite(c, rc, r, obj);
      // Simplification: managedFields are tracked for ConfigMaps (and server-side apply) only.
      const tracked =
        r.plural === "configmaps" ? (trackUpdate(undefined, obj, manager(rc), now(c)) as KObject) : obj;
      return json(c.store.create(r, tracked, { dryRun }), 201);
    }
    case "update": {
      if (!info.name) throw methodNotAllowed();
      const obj = objectBody(await readBody(req, undefined, writeMediaTypes()));
      if (obj.metadata.name !== info.name) {
        throw badRequest(
          `the name of the object (${obj.metadata.name}) does not match the name on the URL (${info.name})`,
        );
      }
      if (r.namespaced) obj.metadata.namespace ??= ns;
      checkRbacWrite(c, rc, r, obj);
      const old = c.store.find(r, ns, info.name!);
      const tracked =
        r.plural === "configmaps" ? (trackUpdate(old, obj, manager(rc), now(c)) as KObject) : obj;
      return json(c.store.update(r, tracked, sub(info.subresource, dryRun)));
    }
    case "patch":
      if (!info.name) throw methodNotAllowed();
      return applyPatch(c, rc, r, req, (obj) => checkRbacWrite(c, rc, r, obj));
    case "delete":
      return deleteOne(c, r, ns, info.name!, await deleteOptions(req, q));
    case "deletecollection": {
      const opts = await deleteOptions(req, q);
      const listed = c.store.list(r, listOptions(ns, q));
      for (const o of listed.items) c.store.delete(r, o.metadata.namespace, o.metadata.name!, opts);
      return json({
        kind: `${r.kind}List`,
        apiVersion: apiVersionOf(r),
        metadata: {},
        items: listed.items.map(stripTypeMeta(r)),
      });
    }
    default:
      throw methodNotAllowed();
  }
}

function sub(subresource: string | undefined, dryRun: boolean): { subresource?: string; dryRun: boolean } {
  return subresource ? { subresource, dryRun } : { dryRun };
}

export function manager(rc: RequestContext): string {
  return rc.url.searchParams.get("fieldManager") ?? (rc.userAgent.split("/")[0] || "unknown");
}

export function now(c: ClusterContext): string {
  return `${c.store.now().toISOString().slice(0, 19)}Z`;
}

export function objectBody(body: unknown): KObject {
  if (!body || typeof body !== "object" || Array.isArray(body))
    throw badRequest("the request body is not an object");
  const obj = body as KObject;
  obj.metadata ??= {};
  return obj;
}

function listOptions(ns: string | undefined, q: URLSearchParams) {
  const limit = Number(q.get("limit") ?? 0);
  return {
    ...(ns ? { namespace: ns } : {}),
    ...(q.get("labelSelector") ? { labelSelector: q.get("labelSelector")! } : {}),
    ...(q.get("fieldSelector") ? { fieldSelector: q.get("fieldSelector")! } : {}),
    ...(limit > 0 ? { limit } : {}),
    ...(q.get("continue") ? { continue: q.get("continue")! } : {}),
  };
}

// Simplification: a Table request (kubectl get) is answered with the plain List, which kubectl accepts.
function listBody(c: ClusterContext, r: ResourceType, ns: string | undefined, q: URLSearchParams) {
  const res = c.store.list(r, listOptions(ns, q));
  const metadata: Record<string, unknown> = { resourceVersion: res.resourceVersion };
  if (res.continue) metadata.continue = res.continue;
  if (res.remainingItemCount !== undefined) metadata.remainingItemCount = res.remainingItemCount;
  return {
    kind: `${r.kind}List`,
    apiVersion: apiVersionOf(r),
    metadata,
    items: res.items.map(stripTypeMeta(r)),
  };
}

/** Items of built-in lists carry no apiVersion/kind on the wire; custom resources' items do. */
function stripTypeMeta(r: ResourceType): (o: KObject) => KObject {
  return (o) => {
    if (r.group === "nvidia.com") return o;
    const { apiVersion: _a, kind: _k, ...rest } = o;
    return rest as KObject;
  };
}

async function deleteOptions(req: Request, q: URLSearchParams): Promise<DeleteOptions> {
  const body = (await readBody(req)) as DeleteOptions | undefined;
  const opts: DeleteOptions = { ...(body ?? {}) };
  const policy = q.get("propagationPolicy");
  if (policy) opts.propagationPolicy = policy as PropagationPolicy;
  if (q.get("gracePeriodSeconds")) opts.gracePeriodSeconds = Number(q.get("gracePeriodSeconds"));
  if (q.getAll("dryRun").includes("All")) opts.dryRun = true;
  if (q.get("orphanDependents")) opts.orphanDependents = q.get("orphanDependents") === "true";
  const valid = ["Background", "Foreground", "Orphan"];
  if (opts.propagationPolicy && !valid.includes(opts.propagationPolicy)) {
    const message = `Unsupported value: "${opts.propagationPolicy}": supported values: "Foreground", "Background", "Orphan", "nil"`;
    throw new ApiStatusError(
      422,
      "Invalid",
      `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: ${message}`,
      {
        group: "meta.k8s.io",
        kind: "DeleteOptions",
        causes: [{ reason: "FieldValueNotSupported", message, field: "propagationPolicy" }],
      },
    );
  }
  return opts;
}

// Pods and namespaces answer a delete with the object; other kinds (custom resources too) with a Status.
const RETURNS_OBJECT = new Set(["pods", "namespaces"]);

function deleteOne(
  c: ClusterContext,
  r: ResourceType,
  ns: string | undefined,
  name: string,
  opts: DeleteOptions,
): Response {
  const result = c.store.delete(r, ns, name, opts);
  const stillThere = !opts.dryRun && c.store.find(r, ns, name)?.metadata.uid === result.metadata.uid;
  // As the apiserver's delete handler: 202 only when the object stays and the client asked for cascading
  // through the deprecated orphanDependents=false; a Foreground propagationPolicy alone answers 200.
  if (stillThere) return json(result, opts.orphanDependents === false ? 202 : 200);
  if (RETURNS_OBJECT.has(r.plural) || opts.dryRun) return json(result, 200);
  return json(
    successStatus({ name, ...(r.group ? { group: r.group } : {}), kind: r.plural, uid: result.metadata.uid }),
  );
}

/** RBAC escalation prevention on Roles, ClusterRoles and their bindings. */
export function checkRbacWrite(c: ClusterContext, rc: RequestContext, r: ResourceType, obj: KObject): void {
  if (r.group !== "rbac.authorization.k8s.io") return;
  const snapshot = rbacSnapshot(c.store);
  if (r.plural === "roles" || r.plural === "clusterroles") {
    const res = checkRoleWrite(rc.user, r.kind as "Role" | "ClusterRole", obj as never, snapshot);
    if (!res.allowed) throw forbidden(r, obj.metadata.name ?? "", res.message);
  } else {
    const res = checkBindingWrite(
      rc.user,
      r.kind as "RoleBinding" | "ClusterRoleBinding",
      obj as never,
      snapshot,
    );
    if (res.allowed) return;
    if (res.notFound) throw notFound(r, res.notFound.name);
    throw forbidden(r, obj.metadata.name ?? "", res.message);
  }
}

export function resourceNotFound(): ApiStatusError {
  return new ApiStatusError(404, "NotFound", "the server could not find the requested resource", {});
}

export { notFound };

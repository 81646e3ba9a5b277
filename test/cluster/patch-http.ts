/** PATCH: JSON patch, JSON merge patch, strategic merge patch and server-side apply. */
import { type ClusterContext, type RequestContext, rbacSnapshot } from "./context.ts";
import { ApiStatusError, badRequest, notFound, unsupportedMediaTypeRoute } from "./errors.ts";
import { json, readBody } from "./http-util.ts";
import type { KObject } from "./objects.ts";
import { apiVersionOf, type ResourceType } from "./resources.ts";
import { manager, now, objectBody } from "./rest.ts";
import { serverSideApply, trackUpdate } from "./semantics/patch.ts";
import { authorize, forbiddenMessage } from "./semantics/rbac.ts";
import { applyPatchType } from "./store-patch.ts";

const MERGE = "application/merge-patch+json";
const STRATEGIC = "application/strategic-merge-patch+json";
const JSON_PATCH = "application/json-patch+json";
const APPLY = "application/apply-patch+yaml";

function unsupportedPatch(custom: boolean): ApiStatusError {
  const accepted = custom ? [JSON_PATCH, MERGE, APPLY] : [JSON_PATCH, MERGE, STRATEGIC, APPLY];
  return new ApiStatusError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`,
  );
}

function authorizeCreate(
  c: ClusterContext,
  rc: RequestContext,
  r: ResourceType,
  ns: string | undefined,
  name: string,
): void {
  const attrs = { verb: "create", group: r.group, resource: r.plural, namespace: ns, name };
  const decision = authorize(rc.user, attrs, rbacSnapshot(c.store));
  if (!decision.allowed) {
    throw new ApiStatusError(
      403,
      "Forbidden",
      forbiddenMessage(rc.user, attrs, undefined, undefined, decision.reason || undefined),
      {
        kind: r.plural,
        ...(r.group ? { group: r.group } : {}),
        name,
      },
    );
  }
}

export async function applyPatch(
  c: ClusterContext,
  rc: RequestContext,
  r: ResourceType,
  req: Request,
  check: (obj: KObject) => void,
): Promise<Response> {
  const { info, url } = rc;
  const q = url.searchParams;
  const ns = r.namespaced ? info.namespace : undefined;
  const name = info.name!;
  const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim();
  const custom = r.group === "nvidia.com";
  // A type no PATCH route consumes is go-restful's bare 415; a strategic merge patch of a custom
  // resource reaches the patch handler, which lists the types it takes.
  if (![MERGE, STRATEGIC, JSON_PATCH, APPLY].includes(type)) throw unsupportedMediaTypeRoute();
  if (custom && type === STRATEGIC) throw unsupportedPatch(custom);
  const patch = await readBody(req);
  const dryRun = q.getAll("dryRun").includes("All");
  const opts = { dryRun, ...(info.subresource ? { subresource: info.subresource } : {}) };
  const live = c.store.find(r, ns, name);
  if (type === APPLY) {
    const fieldManager = q.get("fieldManager");
    if (!fieldManager) {
      throw new ApiStatusError(
        422,
        "Invalid",
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      );
    }
    const applied = objectBody(patch);
    if (applied.apiVersion !== apiVersionOf(r) || applied.kind !== r.kind) {
      throw badRequest(
        `the API version in the data (${applied.apiVersion}) does not match the expected API version (${apiVersionOf(r)}) or kind (${applied.kind}) does not match ${r.kind}`,
      );
    }
    if (applied.metadata.name && applied.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${applied.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    const force = q.get("force") === "true";
    const result = serverSideApply(live, applied, { fieldManager, force, now: now(c) }) as KObject;
    result.metadata.name = name;
    if (ns) result.metadata.namespace = ns;
    check(result);
    if (!live) {
      // As kube-apiserver's patch handler: an apply that creates is also authorized as "create".
      authorizeCreate(c, rc, r, ns, name);
      return json(c.store.create(r, result, { dryRun }), 201);
    }
    result.metadata.resourceVersion = applied.metadata.resourceVersion ?? live.metadata.resourceVersion;
    return json(c.store.update(r, result, opts));
  }
  if (!live) throw notFound(r, name);
  const next = c.store.mutate(
    r,
    ns,
    name,
    (obj) => {
      const out = applyPatchType(
        type === MERGE ? "merge" : type === STRATEGIC ? "strategic" : "json",
        obj,
        patch,
      );
      check(out);
      return r.plural === "configmaps" ? (trackUpdate(obj, out, manager(rc), now(c)) as KObject) : out;
    },
    opts,
  );
  return json(next);
}

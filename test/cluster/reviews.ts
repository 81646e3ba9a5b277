/** SelfSubjectAccessReview and SubjectAccessReview, answered by the same RBAC evaluator as requests. */
import type { ClusterContext, RequestContext } from "./context.ts";
import { rbacSnapshot } from "./context.ts";
import { ApiStatusError, methodNotAllowed } from "./errors.ts";
import { json, readBody } from "./http-util.ts";
import { decodeAccessReview } from "./protobuf.ts";
import type { ResourceType } from "./resources.ts";
import { objectBody } from "./rest.ts";
import { type Attributes, authorize, type UserInfo } from "./semantics/rbac.ts";

function invalidReview(kind: string, field: string, message: string): ApiStatusError {
  const msg = `${kind}.authorization.k8s.io "" is invalid: ${field}: ${message}`;
  return new ApiStatusError(422, "Invalid", msg, {
    group: "authorization.k8s.io",
    kind,
    causes: [{ reason: "FieldValueInvalid", message, field }],
  });
}

function attributesOf(kind: string, spec: any): Attributes {
  const ra = spec?.resourceAttributes;
  const na = spec?.nonResourceAttributes;
  if (!!ra === !!na) {
    throw invalidReview(
      kind,
      "spec.resourceAttributes",
      `Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified`,
    );
  }
  if (na) return { verb: na.verb ?? "", path: na.path ?? "" };
  const attrs: Attributes = { verb: ra.verb ?? "", group: ra.group ?? "", resource: ra.resource ?? "" };
  if (ra.subresource) attrs.subresource = ra.subresource;
  if (ra.namespace) attrs.namespace = ra.namespace;
  if (ra.name) attrs.name = ra.name;
  return attrs;
}

export async function serveReview(
  c: ClusterContext,
  rc: RequestContext,
  r: ResourceType,
  req: Request,
): Promise<Response> {
  if (rc.info.verb !== "create") throw methodNotAllowed();
  if (r.plural === "selfsubjectreviews") {
    // The body carries nothing to read (kubectl auth whoami sends it as protobuf).
    await req.arrayBuffer();
    return json(
      {
        kind: r.kind,
        apiVersion: "authentication.k8s.io/v1",
        metadata: { creationTimestamp: `${c.store.now().toISOString().slice(0, 19)}Z` },
        status: { userInfo: { username: rc.user.username, groups: rc.user.groups } },
      },
      201,
    );
  }
  const review = objectBody(await readBody(req, decodeAccessReview));
  let subject: UserInfo;
  if (r.plural === "selfsubjectaccessreviews") {
    subject = rc.user;
  } else {
    const spec = review.spec ?? {};
    if (!spec.user && !(spec.groups?.length > 0)) {
      throw invalidReview(
        r.kind,
        "spec.user",
        'Invalid value: "": at least one of user or group must be specified',
      );
    }
    subject = { username: spec.user ?? "", groups: spec.groups ?? [] };
  }
  const decision = authorize(subject, attributesOf(r.kind, review.spec), rbacSnapshot(c.store));
  const status: Record<string, unknown> = { allowed: decision.allowed };
  if (decision.reason) status.reason = decision.reason;
  const body = {
    kind: r.kind,
    apiVersion: "authorization.k8s.io/v1",
    metadata: { creationTimestamp: null, ...(review.metadata ?? {}) },
    spec: review.spec,
    status,
  };
  return json(body, 201);
}

/**
 * ApiStatusError: a failure carrying the exact `Status` body kube-apiserver would send.
 * Constructors mirror k8s.io/apimachinery/pkg/api/errors (NewNotFound, NewAlreadyExists, ...).
 */
import { qualifiedResource, type ResourceType } from "./resources.ts";

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure" | "Success";
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

export class ApiStatusError extends Error {
  readonly status: Status;
  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.name = "ApiStatusError";
    // In the apiserver's field order (details before code).
    this.status = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message,
      reason,
      ...(details ? { details } : {}),
      code,
    };
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): string {
    return this.status.reason;
  }
}

function details(r: ResourceType, name: string): StatusDetails {
  // The apiserver names the resource (plural), not the Kind, in details.kind for these errors.
  return r.group === "" ? { name, kind: r.plural } : { name, group: r.group, kind: r.plural };
}

export function notFound(r: ResourceType, name: string): ApiStatusError {
  return new ApiStatusError(404, "NotFound", `${qualifiedResource(r)} "${name}" not found`, details(r, name));
}

export function alreadyExists(r: ResourceType, name: string): ApiStatusError {
  return new ApiStatusError(
    409,
    "AlreadyExists",
    `${qualifiedResource(r)} "${name}" already exists`,
    details(r, name),
  );
}

export function conflict(r: ResourceType, name: string, why: string): ApiStatusError {
  return new ApiStatusError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualifiedResource(r)} "${name}": ${why}`,
    details(r, name),
  );
}

export const STALE_OBJECT =
  "the object has been modified; please apply your changes to the latest version and try again";

export function forbidden(r: ResourceType | undefined, name: string, message: string): ApiStatusError {
  return new ApiStatusError(403, "Forbidden", message, r ? details(r, name) : { name });
}

/** NewInvalid: the qualified Kind ("Job.batch") in the message; no name in details when there is none. */
export function invalid(r: ResourceType, name: string, causes: StatusCause[]): ApiStatusError {
  const summary = causes.map((c) => `${c.field}: ${c.message}`).join(", ");
  const list = causes.length > 1 ? `[${summary}]` : summary;
  const d: StatusDetails = {
    ...(name ? { name } : {}),
    ...(r.group ? { group: r.group } : {}),
    kind: r.kind,
    causes,
  };
  const kind = r.group ? `${r.kind}.${r.group}` : r.kind;
  return new ApiStatusError(422, "Invalid", `${kind} "${name}" is invalid: ${list}`, d);
}

/** A compacted resourceVersion: the apiserver answers 410 with reason Expired. */
export function expired(message: string): ApiStatusError {
  return new ApiStatusError(410, "Expired", message);
}

export function gone(message: string): ApiStatusError {
  return new ApiStatusError(410, "Gone", message);
}

export function tooManyRequests(message: string, retryAfterSeconds?: number): ApiStatusError {
  return new ApiStatusError(
    429,
    "TooManyRequests",
    message,
    retryAfterSeconds === undefined ? {} : { retryAfterSeconds },
  );
}

export function badRequest(message: string): ApiStatusError {
  return new ApiStatusError(400, "BadRequest", message);
}

export function unauthorized(): ApiStatusError {
  return new ApiStatusError(401, "Unauthorized", "Unauthorized");
}

export function methodNotSupported(r: ResourceType, verb: string): ApiStatusError {
  return new ApiStatusError(
    405,
    "MethodNotAllowed",
    `${verb} is not supported on resources of kind "${qualifiedResource(r)}"`,
    { kind: r.plural },
  );
}

/** go-restful's answer when a route exists for the path but not for the method. */
export function methodNotAllowed(): ApiStatusError {
  return new ApiStatusError(
    405,
    "MethodNotAllowed",
    "the server does not allow this method on the requested resource",
    {},
  );
}

/** The apiserver's NewUnsupportedMediaTypeError: a body in a media type the handler does not decode. */
export function unsupportedMediaType(accepted: string[]): ApiStatusError {
  return new ApiStatusError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`,
  );
}

/** go-restful's answer when no route consumes the request's Content-Type (e.g. a PATCH of another type). */
export function unsupportedMediaTypeRoute(): ApiStatusError {
  return new ApiStatusError(415, "UnsupportedMediaType", "415: Unsupported Media Type", {});
}

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
    this.status = {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message,
      reason,
      code,
    };
    if (details) this.status.details = details;
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

export function invalid(r: ResourceType, name: string, causes: StatusCause[]): ApiStatusError {
  const summary = causes.map((c) => `${c.field}: ${c.message}`).join(", ");
  const list = causes.length > 1 ? `[${summary}]` : summary;
  const d: StatusDetails = { name, kind: r.kind, causes };
  if (r.group !== "") d.group = r.group;
  return new ApiStatusError(422, "Invalid", `${r.kind} "${name}" is invalid: ${list}`, d);
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

export function unsupportedMediaType(contentType: string): ApiStatusError {
  return new ApiStatusError(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/apply-patch+yaml, application/merge-patch+json, application/strategic-merge-patch+json (got ${contentType})`,
  );
}

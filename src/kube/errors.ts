import { AicrError, type ErrorCode } from "../core/errors.ts";
import { KubeHttpError, NoAnswerError } from "./http.ts";

/** metav1.StatusDetails: the object a failure is about, and the field-level causes. */
export interface StatusDetails {
  name?: string | undefined;
  group?: string | undefined;
  kind?: string | undefined;
  uid?: string | undefined;
  causes?:
    | { reason?: string | undefined; message?: string | undefined; field?: string | undefined }[]
    | undefined;
  retryAfterSeconds?: number | undefined;
}

/** metav1.Status of a failed request, as decoded from the answer's body. */
export interface KubeStatus {
  /** The status code the body suggests (metav1.Status.code); the answer's own when the body has none. */
  code: number;
  /** metav1.StatusReason: NotFound, AlreadyExists, Conflict, Forbidden, Invalid, … ("Unknown" when unsaid). */
  reason: string;
  message: string;
  details?: StatusDetails | undefined;
}

/**
 * The apiserver answered a request with a non-2xx status: the one error the client throws for that.
 * An AicrError (code from the HTTP status, message "<what we were doing>: <the apiserver's message>")
 * that also carries the answer in Kubernetes words; branch on it with isNotFound, isConflict, … below.
 */
export class KubeStatusError extends AicrError {
  /** The answer's HTTP status. */
  readonly httpStatus: number;
  readonly status: KubeStatus;
  /** The request: its HTTP verb and its path (no query). */
  readonly method: string;
  readonly path: string;
  /** The Retry-After header, in seconds, when the answer had one. */
  readonly retryAfterSeconds: number | undefined;

  constructor(answer: KubeHttpError, doing: string) {
    const status = decodeStatus(answer);
    const retry = Number(answer.headers.get("retry-after"));
    const retryAfterSeconds = answer.headers.has("retry-after") && Number.isFinite(retry) ? retry : undefined;
    super(codeFor(answer.status), `${doing}: ${status.message}`, {
      context: {
        status: answer.status,
        reason: status.reason,
        ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
      },
      remedy: remedyFor(answer.status),
      cause: answer,
    });
    this.httpStatus = answer.status;
    this.status = status;
    this.method = answer.method;
    this.path = answer.path;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The fields that are set, so a decoded Status compares equal to the body it came from. */
const setFields = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

function decodeDetails(raw: unknown): StatusDetails | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  const d = raw as Record<string, unknown>;
  return setFields({
    name: text(d.name),
    group: text(d.group),
    kind: text(d.kind),
    uid: text(d.uid),
    causes: Array.isArray(d.causes)
      ? d.causes
          .filter((c): c is Record<string, unknown> => Boolean(c) && typeof c === "object")
          .map((c) => setFields({ reason: text(c.reason), message: text(c.message), field: text(c.field) }))
      : undefined,
    retryAfterSeconds: typeof d.retryAfterSeconds === "number" ? d.retryAfterSeconds : undefined,
  });
}

/** The Status body of a non-2xx answer; a body that is not one (a proxy's page, nothing) still yields one. */
function decodeStatus(answer: KubeHttpError): KubeStatus {
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(answer.body) as unknown;
    if (parsed && typeof parsed === "object") body = parsed as Record<string, unknown>;
  } catch {
    if (answer.body.trim()) body = { message: answer.body.trim() };
  }
  return setFields({
    code: typeof body.code === "number" && body.code > 0 ? body.code : answer.status,
    reason: text(body.reason) ?? (answer.status === 401 ? "Unauthorized" : "Unknown"),
    message: text(body.message) ?? `HTTP ${answer.status}`,
    details: decodeDetails(body.details),
  });
}

const TRANSPORT_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ConnectionRefused",
  "ConnectionClosed",
  "FailedToOpenSocket",
]);

const errno = (err: unknown): string | undefined => {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === "string" ? code : undefined;
};

/** The server's certificate was refused (unknown CA, self-signed, wrong name, expired). */
const isTlsCode = (code: string): boolean =>
  code.startsWith("ERR_TLS") ||
  code.includes("CERT") ||
  code.startsWith("UNABLE_TO_") ||
  code.includes("SELF_SIGNED") ||
  code.includes("HOSTNAME") ||
  code.includes("ALTNAME");

/** True for a lost connection or unreachable server: the request may or may not have been applied. */
function isTransportError(err: unknown): boolean {
  const code = errno(err);
  return code !== undefined && (TRANSPORT_CODES.has(code) || isTlsCode(code));
}

/** What the operator can do about an answer with this HTTP status (callers with more context say more). */
function remedyFor(httpStatus: number): string {
  if (httpStatus === 401)
    return "your kubeconfig credentials were rejected; refresh them (e.g. re-run your cloud's get-credentials command)";
  if (httpStatus === 403)
    return "ask a cluster admin to grant the permission the message names (kubectl auth can-i shows what you have)";
  if (httpStatus === 404) return "check the name and namespace (kubectl get shows what exists)";
  if (httpStatus === 409) return "another client changed the object at the same time; run the command again";
  if (httpStatus === 429)
    return "the API server is throttling requests; wait a minute and run the command again";
  if (httpStatus === 400 || httpStatus === 422 || httpStatus === 415)
    return "check the values given on the command line; if they are right, run again with --debug and report it";
  return "check the API server's health (kubectl get --raw /readyz), then run the command again";
}

/** A transport errno in words (the client's own text is not for operators). */
const TRANSPORT_WORDS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ConnectionRefused: "connection refused",
  ECONNRESET: "connection reset",
  ConnectionClosed: "connection closed",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "no route to host",
  ENETUNREACH: "network unreachable",
  ENOTFOUND: "host name not found",
  EAI_AGAIN: "host name lookup failed",
  FailedToOpenSocket: "cannot open a socket",
};

function codeFor(httpStatus: number): ErrorCode {
  if (httpStatus === 404) return "NOT_FOUND";
  if (httpStatus === 409) return "CONFLICT";
  if (httpStatus === 401 || httpStatus === 403) return "UNAUTHORIZED";
  if (httpStatus === 400 || httpStatus === 422 || httpStatus === 415) return "INVALID_REQUEST";
  if (httpStatus === 429) return "RATE_LIMIT_EXCEEDED";
  if (httpStatus === 503 || httpStatus === 504) return "SERVICE_UNAVAILABLE";
  return "INTERNAL";
}

/** Any client failure → AicrError naming what we were doing; the apiserver's own message is kept. */
export function toAicrError(err: unknown, doing: string, server?: string): AicrError {
  if (err instanceof AicrError) return err;
  if (err instanceof NoAnswerError) {
    return new AicrError(
      "SERVICE_UNAVAILABLE",
      `${doing}: the API server${server ? ` at ${server}` : ""} accepted no request or sent no answer`,
      {
        remedy:
          "check that the kubeconfig's server address is the API server itself (not a port or proxy that accepts connections and holds them) and that the server is healthy",
        // Not worth a retry: a server that held one request for this long holds the next one too.
        context: { noAnswer: true },
        cause: err,
      },
    );
  }
  if (err instanceof KubeHttpError) return new KubeStatusError(err, doing);
  const code = errno(err);
  if (code !== undefined && isTlsCode(code)) {
    return new AicrError(
      "SERVICE_UNAVAILABLE",
      `${doing}: the API server${server ? ` at ${server}` : ""} presented a TLS certificate the kubeconfig does not trust: ${err instanceof Error && err.message ? err.message : code}`,
      {
        remedy:
          "check the cluster's certificate-authority-data (or certificate-authority) in the kubeconfig, and that the server address is a name the certificate was issued for",
        // The reason is in the message once; the client's error is not a cause to print again.
        context: { errno: code },
      },
    );
  }
  if (isTransportError(err)) {
    return new AicrError(
      "SERVICE_UNAVAILABLE",
      `${doing}: cannot reach the Kubernetes API server${server ? ` at ${server}` : ""} (${TRANSPORT_WORDS[code ?? ""] ?? code})`,
      {
        remedy:
          "check the VPN or bastion connection, the kubeconfig's server address, and any firewall between you and it",
        // The errno in words, not the client's text ("Is the computer able to access the url?").
        context: { errno: code },
      },
    );
  }
  if (err instanceof Error && err.name === "AbortError") {
    return new AicrError("CANCELED", `${doing}: cancelled`, {
      remedy: "run the command again when you want it to finish",
    });
  }
  return new AicrError("INTERNAL", `${doing}: ${err instanceof Error ? err.message : String(err)}`, {
    remedy: "run the command again with --debug; if it fails the same way, report it with that output",
  });
}

/** Worth retrying: the server was unreachable or dropped us, throttled us, or failed on its side. */
export function isTransient(err: unknown): boolean {
  if (err instanceof KubeStatusError) return err.httpStatus === 429 || err.httpStatus >= 500;
  return (
    err instanceof AicrError &&
    !err.context.noAnswer &&
    (err.code === "SERVICE_UNAVAILABLE" || err.code === "RATE_LIMIT_EXCEEDED")
  );
}

// Plain booleans, not type guards: a guard that is false for some KubeStatusErrors (isConflict) would
// narrow its else-branch wrongly.
const answered = (err: unknown, httpStatus: number): boolean =>
  err instanceof KubeStatusError && err.httpStatus === httpStatus;

/** 404: the object (or the API) is not there. */
export const isNotFound = (err: unknown): boolean => answered(err, 404);
/** 409 AlreadyExists: a create found an object at the name. */
export const isAlreadyExists = (err: unknown): boolean =>
  err instanceof KubeStatusError && err.status.reason === "AlreadyExists";
/** 409 other than AlreadyExists: a failed precondition or a stale resourceVersion. */
export const isConflict = (err: unknown): boolean => answered(err, 409) && !isAlreadyExists(err);
/** 403: authenticated, but not allowed (RBAC, or an admission plugin such as Pod Security). */
export const isForbidden = (err: unknown): boolean => answered(err, 403);
/** 401: the credentials were not accepted. */
export const isUnauthorized = (err: unknown): boolean => answered(err, 401);
/** 405: the resource does not serve this verb. */
export const isMethodNotSupported = (err: unknown): boolean => answered(err, 405);
/** 400: the request itself was malformed. */
export const isBadRequest = (err: unknown): boolean => answered(err, 400);
/** 422 Invalid: the object failed validation (details.causes name the fields). */
export const isInvalid = (err: unknown): boolean => answered(err, 422);

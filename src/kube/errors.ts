import { AicrError, type ErrorCode } from "../core/errors.ts";
import { KubeHttpError, NoAnswerError } from "./http.ts";

/** The apiserver's answer, kept in Kubernetes words so callers can branch on `reason`. */
interface KubeStatus {
  code: number;
  reason: string;
  message: string;
  retryAfterSeconds?: number | undefined;
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

/** The Status body of a non-2xx answer (kube/http.ts hands it over as the raw text). */
function kubeStatusOf(err: unknown): KubeStatus | undefined {
  if (!(err instanceof KubeHttpError)) return undefined;
  let body: { reason?: string; message?: string } = {};
  try {
    const parsed = JSON.parse(err.body) as unknown;
    if (parsed && typeof parsed === "object") body = parsed as typeof body;
  } catch {
    if (err.body.trim()) body = { message: err.body.trim() };
  }
  const retry = Number(err.headers.get("retry-after"));
  return {
    code: err.status,
    reason: body.reason ?? (err.status === 401 ? "Unauthorized" : "Unknown"),
    message: body.message ?? `HTTP ${err.status}`,
    retryAfterSeconds: err.headers.has("retry-after") && Number.isFinite(retry) ? retry : undefined,
  };
}

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

function codeFor(status: KubeStatus): ErrorCode {
  if (status.code === 404) return "NOT_FOUND";
  if (status.code === 409) return "CONFLICT";
  if (status.code === 401 || status.code === 403) return "UNAUTHORIZED";
  if (status.code === 400 || status.code === 422 || status.code === 415) return "INVALID_REQUEST";
  if (status.code === 429) return "RATE_LIMITED";
  if (status.code === 503 || status.code === 504) return "UNAVAILABLE";
  return "INTERNAL";
}

/** Any client failure → AicrError naming what we were doing; the apiserver's own message is kept. */
export function toAicrError(err: unknown, doing: string, server?: string): AicrError {
  if (err instanceof AicrError) return err;
  if (err instanceof NoAnswerError) {
    return new AicrError(
      "UNAVAILABLE",
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
  const status = kubeStatusOf(err);
  if (status) {
    return new AicrError(codeFor(status), `${doing}: ${status.message}`, {
      context: {
        status: status.code,
        reason: status.reason,
        ...(status.retryAfterSeconds !== undefined ? { retryAfterSeconds: status.retryAfterSeconds } : {}),
      },
      remedy:
        status.code === 401
          ? "your kubeconfig credentials were rejected; refresh them (e.g. re-run your cloud's get-credentials command)"
          : undefined,
      cause: err,
    });
  }
  const code = errno(err);
  if (code !== undefined && isTlsCode(code)) {
    return new AicrError(
      "UNAVAILABLE",
      `${doing}: the API server${server ? ` at ${server}` : ""} presented a TLS certificate the kubeconfig does not trust: ${err instanceof Error ? err.message : code}`,
      {
        remedy:
          "check the cluster's certificate-authority-data (or certificate-authority) in the kubeconfig, and that the server address is a name the certificate was issued for",
        context: { errno: code },
        cause: err,
      },
    );
  }
  if (isTransportError(err)) {
    return new AicrError(
      "UNAVAILABLE",
      `${doing}: cannot reach the Kubernetes API server${server ? ` at ${server}` : ""}`,
      {
        remedy:
          "check the VPN or bastion connection, the kubeconfig's server address, and any firewall between you and it",
        context: { errno: errno(err) },
        cause: err,
      },
    );
  }
  if (err instanceof Error && err.name === "AbortError") {
    return new AicrError("CANCELED", `${doing}: cancelled`, { cause: err });
  }
  return new AicrError("INTERNAL", `${doing}: ${err instanceof Error ? err.message : String(err)}`, {
    cause: err,
  });
}

/** Worth retrying: the server was unreachable or dropped us, throttled us, or failed on its side. */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof AicrError) || err.context.noAnswer) return false;
  const status = err.context.status;
  return (
    err.code === "UNAVAILABLE" || err.code === "RATE_LIMITED" || (typeof status === "number" && status >= 500)
  );
}

/** The HTTP status and Kubernetes reason an AicrError from the client carries, if any. */
export function statusOf(err: unknown): { status?: number; reason?: string } {
  if (!(err instanceof AicrError)) return {};
  const { status, reason } = err.context;
  return {
    ...(typeof status === "number" ? { status } : {}),
    ...(typeof reason === "string" ? { reason } : {}),
  };
}

export const isNotFoundError = (err: unknown): boolean => statusOf(err).status === 404;
export const isAlreadyExistsError = (err: unknown): boolean => statusOf(err).reason === "AlreadyExists";
/** 409 other than AlreadyExists: a failed precondition or a stale resourceVersion. */
export const isConflictError = (err: unknown): boolean => {
  const s = statusOf(err);
  return s.status === 409 && s.reason !== "AlreadyExists";
};
export const isForbiddenError = (err: unknown): boolean => statusOf(err).status === 403;

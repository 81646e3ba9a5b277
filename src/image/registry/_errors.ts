/**
 * Registry failures as AicrErrors: unreachable (DNS, refused, TLS) → SERVICE_UNAVAILABLE with the remedy
 * that fits the cause; an HTTP error answer → a code by status, the registry's own error text kept.
 * Messages name the registry and never carry a header value.
 */
import { AicrError, type ErrorCode } from "../../core/errors.ts";

const RETRYABLE_NET = new Set([
  "ECONNRESET",
  "ConnectionClosed",
  "ETIMEDOUT",
  "EPIPE",
  "ECONNABORTED",
  "UND_ERR_SOCKET",
]);
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ConnectionRefused",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "FailedToOpenSocket",
]);
const DNS = new Set(["ENOTFOUND", "EAI_AGAIN", "DNSException"]);

const errno = (err: unknown): string | undefined => {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === "string" ? code : undefined;
};

/** The server's certificate was refused (unknown CA, self-signed, wrong name, expired). */
const isTlsCode = (code: string): boolean =>
  /^ERR_TLS|CERT|^UNABLE_TO_|SELF_SIGNED|HOSTNAME|ALTNAME|^ERR_SSL/.test(code);

/** A failed fetch (no HTTP answer) → AicrError; `retryable` marks a dropped connection. */
export function transportError(err: unknown, registry: string, plainHttp: boolean): AicrError {
  if (err instanceof AicrError) return err;
  const code = errno(err) ?? "";
  const detail = `${err instanceof Error ? err.message : String(err)}${code ? ` (${code})` : ""}`;
  const context = { registry, errno: code };
  if (code === "EPROTO" || code === "ERR_SSL_WRONG_VERSION_NUMBER") {
    return new AicrError(
      "SERVICE_UNAVAILABLE",
      `The TLS handshake with the registry ${JSON.stringify(registry)} failed: ${detail}`,
      {
        remedy: "if the registry serves plain HTTP on this port, pass --plain-http; else check the port",
        context,
      },
    );
  }
  if (isTlsCode(code)) {
    const name = /ALTNAME|HOSTNAME/.test(code);
    return new AicrError(
      "SERVICE_UNAVAILABLE",
      `The registry ${JSON.stringify(registry)} presented a TLS certificate this machine does not trust: ${detail}`,
      {
        remedy: name
          ? "push to the host name or IP address the registry's certificate was issued for"
          : "pass --ca-file <pem> with the CA that issued the registry's certificate (or add it to the system trust store)",
        context: { ...context, tls: true },
      },
    );
  }
  if (DNS.has(code)) {
    return new AicrError(
      "SERVICE_UNAVAILABLE",
      `Cannot resolve the registry host ${JSON.stringify(registry)}: ${detail}`,
      {
        remedy: "check the registry name for typos, and the DNS, proxy or VPN this machine uses",
        context,
      },
    );
  }
  if (UNREACHABLE.has(code)) {
    return new AicrError(
      "SERVICE_UNAVAILABLE",
      `Cannot reach the registry ${JSON.stringify(registry)}: ${detail}`,
      {
        remedy:
          "check the registry's host and port, that it is running, and any firewall between here and it",
        context,
      },
    );
  }
  return new AicrError(
    "SERVICE_UNAVAILABLE",
    `Lost the connection to the registry ${JSON.stringify(registry)}: ${detail}`,
    {
      remedy: plainHttp
        ? "check that the registry serves plain HTTP on this port (drop --plain-http for HTTPS)"
        : "retry (a push resumes with the blobs already uploaded); if it keeps failing, check whether the registry serves plain HTTP (--plain-http)",
      context: { ...context, retryable: RETRYABLE_NET.has(code) },
    },
  );
}

/** The registry's `{"errors":[{code,message}]}` as one line, else the start of the body. */
export function describeBody(body: string): string {
  try {
    const parsed = JSON.parse(body) as { errors?: { code?: string; message?: string }[] };
    const list = parsed.errors?.map((e) => [e.code, e.message].filter(Boolean).join(": ")).filter(Boolean);
    if (list?.length) return list.join("; ");
  } catch {
    // not JSON: a proxy's HTML page or plain text
  }
  return body.replace(/\s+/g, " ").trim().slice(0, 200);
}

function codeFor(status: number): ErrorCode {
  if (status === 401 || status === 403) return "UNAUTHORIZED";
  if (status === 404) return "NOT_FOUND";
  if (status === 429) return "RATE_LIMIT_EXCEEDED";
  if (status >= 500) return "SERVICE_UNAVAILABLE";
  if (status >= 400) return "INVALID_REQUEST";
  return "INTERNAL";
}

const REMEDY: Record<number, string> = {
  404: "check the repository name; some registries need the repository (or project) created before a push",
  405: "this registry (or this endpoint) does not accept pushes; check it is not a read-only mirror or pull-through cache",
  413: "the registry or a proxy in front of it refuses bodies this large; raise its request size limit",
  429: "the registry is rate limiting; wait and retry (a push resumes with the blobs already uploaded)",
};

/** An HTTP error answer → AicrError; 429 and 5xx are marked retryable. */
export async function httpError(res: Response, doing: string, registry: string): Promise<AicrError> {
  const body = await res.text().catch(() => "");
  const what = describeBody(body);
  const status = res.status;
  return new AicrError(
    codeFor(status),
    `${doing} on ${JSON.stringify(registry)} failed: HTTP ${status}${what ? ` ${what}` : ""}`,
    {
      remedy:
        REMEDY[status] ??
        (status >= 500
          ? "the registry failed on its side; retry (a push resumes with the blobs already uploaded)"
          : undefined),
      context: { registry, status, retryable: status >= 500 || status === 429 },
    },
  );
}

export const isRetryable = (err: unknown): boolean =>
  err instanceof AicrError && err.context.retryable === true;

/** An unexpected answer (e.g. 200 where 201 or 202 is the protocol) → INTERNAL, with the status. */
export function protocolError(doing: string, registry: string, detail: string): AicrError {
  return new AicrError("INTERNAL", `${doing} on ${JSON.stringify(registry)}: ${detail}`, {
    remedy: "the registry does not follow the OCI distribution API here; report it with --debug output",
    context: { registry },
  });
}

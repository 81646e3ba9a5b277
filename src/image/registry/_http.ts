/**
 * One HTTP exchange with a registry: TLS trust (system roots plus --ca-file), no automatic
 * redirects (an Authorization header must not follow one to blob storage), the cancel signal, and
 * transport failures turned into AicrErrors.
 */
import { rootCertificates } from "node:tls";
import { AicrError } from "../../core/errors.ts";
import { transportError } from "./_errors.ts";

export interface HttpOptions {
  registry: string;
  plainHttp: boolean;
  /** Extra CA certificates (PEM) trusted besides the system roots. */
  ca?: string | undefined;
  signal: AbortSignal;
}

export interface HttpRequest {
  method: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string | undefined;
}

export const cancelled = (signal: AbortSignal): AicrError =>
  signal.reason instanceof AicrError
    ? signal.reason
    : new AicrError("CANCELED", "The push was cancelled", {
        remedy: "run the push again: blobs already there are skipped",
        cause: signal.reason,
      });

export function makeFetch(o: HttpOptions): (url: URL, req: HttpRequest) => Promise<Response> {
  // Verification is always explicit: Bun's default follows NODE_TLS_REJECT_UNAUTHORIZED, and a
  // registry's credentials must never go to a server it did not verify.
  const tls = { rejectUnauthorized: true, ...(o.ca ? { ca: [...rootCertificates, o.ca] } : {}) };
  return async (url, req) => {
    if (o.signal.aborted) throw cancelled(o.signal);
    try {
      return await fetch(url, {
        method: req.method,
        headers: req.headers ?? {},
        ...(req.body !== undefined ? { body: req.body } : {}),
        redirect: "manual",
        signal: o.signal,
        tls,
      });
    } catch (err) {
      if (o.signal.aborted) throw cancelled(o.signal);
      throw transportError(err, o.registry, o.plainHttp);
    }
  };
}

/** Reads and drops an answer's body so its connection goes back to the pool. */
export async function drain(res: Response): Promise<void> {
  await res.arrayBuffer().catch(() => undefined);
}

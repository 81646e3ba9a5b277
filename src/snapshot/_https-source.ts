/**
 * A document named by an https:// URL (aicr validate -r/-s, as the Go original takes one). The URL is
 * checked before any request: https only (plain http:// is refused), no user:password@. The fetch:
 *  - TLS verified always and explicitly (never NODE_TLS_REJECT_UNAUTHORIZED's say): the system roots,
 *    plus the --ca-file CA when given;
 *  - at most MAX_REDIRECTS redirects, each to the same host (https, same hostname and port);
 *  - the kind's cap (a file's, INPUT_LIMITS) enforced as it streams: a Content-Length above it is
 *    refused before the body, a body that grows past it is cut off;
 *  - one bound for the whole exchange (INPUT_READ_DEADLINE_MS, as a file read's) and the run's
 *    cancel signal;
 *  - strict UTF-8, a leading BOM dropped, as a file's text.
 * Every message shows the URL masked (core/url.ts: user:password@ and query values as ***); a fetch
 * that fails says why and how to do without it: download the document where the URL is reachable
 * and pass the file — an air-gapped host reads files and cm:// only.
 */
import { rootCertificates } from "node:tls";
import { AicrError, type ErrorCode } from "../core/errors.ts";
import { decodeUtf8, INPUT_READ_DEADLINE_MS } from "../core/input-file.ts";
import { maskUrl } from "../core/url.ts";

/** Redirects followed before the fetch is given up (each within the first URL's host). */
export const MAX_REDIRECTS = 5;

/** `<scheme>://` at the start of a flag's value: a URL, not a path. */
const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

export const looksLikeUrl = (value: string): boolean => SCHEME.test(value);

export interface FetchSpec {
  /** The flag that named the URL (`--recipe`), in every message. */
  flag: string;
  /** What the document is (`recipe`): the remedy's file name. */
  what: string;
  /** The command, for the remedy's example (`aicr validate`). */
  command: string;
  maxBytes: number;
  /** Extra CA certificates (PEM) trusted besides the system roots (--ca-file). */
  ca?: string | undefined;
  /** The run's cancel signal. */
  signal: AbortSignal;
  /** The whole exchange's bound (default INPUT_READ_DEADLINE_MS). */
  timeoutMs?: number | undefined;
}

const sizeText = (n: number): string =>
  n >= 1024 * 1024 && n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${n} bytes`;

/** The fallback an air-gapped host always has: fetch it elsewhere, pass the file. */
function downloadRemedy(url: string, spec: Pick<FetchSpec, "flag" | "what" | "command">): string {
  const shown = maskUrl(url);
  // a masked URL would download the wrong thing: then the operator fills in their own
  const target = shown === url && !url.includes("'") ? `'${url}'` : "'<url>'";
  const file = `${spec.what}.yaml`;
  return `download it where the URL is reachable and pass the file, e.g. curl -fsSLo ${file} ${target} && ${spec.command} ${spec.flag} ${file}`;
}

function refusal(
  code: ErrorCode,
  url: string,
  spec: Pick<FetchSpec, "flag" | "what" | "command">,
  problem: string,
  remedy: string,
): AicrError {
  const shown = maskUrl(url);
  // no `cause`: the operator's text would repeat it, and a problem already says what it holds
  return new AicrError(code, `${spec.flag} ${JSON.stringify(shown)}: ${problem}`, {
    remedy,
    context: { field: spec.flag, value: shown },
  });
}

/**
 * A flag's URL value, checked before any request: https:// with a host and nothing of a credential;
 * http:// and every other scheme refused (INVALID_REQUEST).
 */
export function parseHttpsUrl(value: string, spec: Pick<FetchSpec, "flag" | "what" | "command">): URL {
  const bad = (problem: string, remedy: string) => refusal("INVALID_REQUEST", value, spec, problem, remedy);
  const scheme = (SCHEME.exec(value)?.[1] ?? "").toLowerCase();
  const either = "pass a file path, cm://<namespace>/<name> or an https:// URL";
  if (scheme === "http")
    throw bad(
      "plain http:// is refused: the document would travel unencrypted and unauthenticated",
      `serve it over https:// (--ca-file <pem> trusts a private CA), or ${downloadRemedy(value, spec)}`,
    );
  if (scheme !== "https") throw bad(`${scheme}:// is not a source aicr reads`, either);
  // The URL parser drops tabs and newlines without a word: such a value is refused instead.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters refused
  if (/[\s\u0000-\u001f\u007f]/.test(value))
    throw bad("a URL holding whitespace or a control character", "pass the URL alone, percent-encoded");
  const authority = value.slice(value.indexOf("://") + 3).split(/[/?#]/, 1)[0] ?? "";
  if (authority.includes("@"))
    throw bad(
      "credentials in a URL are refused (they would reach logs, reports and shell history)",
      `drop the user:password@ part; for a server that needs them, ${downloadRemedy(value, spec)}`,
    );
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw bad("not a valid URL", "pass https://<host>[:<port>]/<path>");
  }
  if (!url.hostname) throw bad("a URL without a host", "pass https://<host>[:<port>]/<path>");
  return url;
}

/** `host[:port]` as the same-host rule compares it (the default port is empty in both). */
const origin = (u: URL): string => `${u.hostname}${u.port ? `:${u.port}` : ""}`;

/** The next URL of a redirect: relative to the current one, https, the first URL's host and port. */
function redirectTarget(first: URL, current: URL, location: string | null, spec: FetchSpec): URL {
  const fail = (problem: string, remedy: string) =>
    refusal("INVALID_REQUEST", first.href, spec, problem, remedy);
  if (!location) throw fail("a redirect without a Location header", downloadRemedy(first.href, spec));
  let next: URL;
  try {
    next = new URL(location, current);
  } catch {
    throw fail("a redirect to an invalid URL", downloadRemedy(first.href, spec));
  }
  if (next.username || next.password)
    throw fail("a redirect to a URL with credentials in it is refused", downloadRemedy(first.href, spec));
  if (next.protocol !== "https:" || origin(next) !== origin(first)) {
    const to = next.protocol === "https:" ? origin(next) : `${next.protocol}//${origin(next)}`;
    throw fail(
      `redirected from ${origin(first)} to ${to}: aicr follows a redirect only within the same host (https, same host and port)`,
      `pass the URL on ${to} itself if you trust that host (${maskUrl(next)}), or ${downloadRemedy(first.href, spec)}`,
    );
  }
  return next;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A non-2xx answer's code: missing → NOT_FOUND, refused → UNAUTHORIZED, busy/failing → unavailable. */
function statusCode(status: number): ErrorCode {
  if (status === 404 || status === 410) return "NOT_FOUND";
  if (status === 401 || status === 403) return "UNAUTHORIZED";
  if (status === 429) return "RATE_LIMIT_EXCEEDED";
  if (status >= 500 || status === 408) return "SERVICE_UNAVAILABLE";
  return "INVALID_REQUEST";
}

const errnoOf = (err: unknown): string => {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === "string" ? code : "";
};

/** The runtime's own text, should it ever quote a URL: its query and fragment masked as everywhere. */
function scrub(text: string, urls: readonly URL[]): string {
  let out = text;
  for (const u of urls) {
    out = out.replaceAll(u.href, maskUrl(u));
    if (u.search) out = out.replaceAll(u.search, maskUrl(u.search));
    if (u.hash) out = out.replaceAll(u.hash, "#***");
  }
  return out;
}

/** A fetch that got no (whole) answer → SERVICE_UNAVAILABLE, with the remedy that fits the cause. */
function transportFailure(err: unknown, url: URL, current: URL, spec: FetchSpec): AicrError {
  const code = errnoOf(err);
  const host = origin(current);
  const said = err instanceof Error ? err.message : String(err);
  const detail = `${scrub(said, [url, current])}${code && !said.includes(code) ? ` (${code})` : ""}`;
  const offline = downloadRemedy(url.href, spec);
  const fail = (problem: string, remedy: string) =>
    refusal("SERVICE_UNAVAILABLE", url.href, spec, problem, remedy);
  if (/ALTNAME|HOSTNAME/.test(code))
    return fail(
      `the certificate of ${host} is not for that name: ${detail}`,
      `use the host name the server's certificate names, or ${offline}`,
    );
  if (/^ERR_TLS|CERT|^UNABLE_TO_|SELF_SIGNED|^ERR_SSL/.test(code))
    return fail(
      `the certificate of ${host} is not trusted: ${detail}`,
      `pass --ca-file <pem> with the CA that issued it, or ${offline}`,
    );
  if (code === "EPROTO")
    return fail(
      `the TLS handshake with ${host} failed: ${detail}`,
      `check the port serves https, or ${offline}`,
    );
  if (["ENOTFOUND", "EAI_AGAIN", "DNSException"].includes(code))
    return fail(
      `cannot resolve ${current.hostname}: ${detail}`,
      `check the host name and this machine's DNS or proxy; on an air-gapped host, ${offline}`,
    );
  return fail(
    `cannot fetch it from ${host}: ${detail}`,
    `check the URL, that the server is up and what lies between (proxy, firewall); on an air-gapped host, ${offline}`,
  );
}

/** The body, read as it arrives and cut off at the cap. */
async function readCapped(res: Response, url: URL, spec: FetchSpec): Promise<Uint8Array> {
  const tooBig = (problem: string) =>
    refusal(
      "INVALID_REQUEST",
      url.href,
      spec,
      `${problem}, above the ${sizeText(spec.maxBytes)} limit of a ${spec.what}`,
      `check the URL names a ${spec.what}; ${downloadRemedy(url.href, spec)}`,
    );
  const declared = res.headers.get("content-length");
  // a compressed body's length is not the document's: it is counted as it is decoded instead
  if (declared !== null && !res.headers.get("content-encoding") && Number(declared) > spec.maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw tooBig(`the server announces ${declared} bytes`);
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > spec.maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooBig(`more than ${sizeText(spec.maxBytes)} sent`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * The text at `url` (already checked by parseHttpsUrl): its answer's body after same-host redirects,
 * within the cap and the bound, as strict UTF-8. Every failure is an AicrError naming the flag and the
 * masked URL: SERVICE_UNAVAILABLE for no answer (DNS, refused, TLS, the bound), by status for a
 * non-2xx answer, INVALID_REQUEST for a redirect off the host, a body over the cap or not UTF-8; the
 * cancel signal's own reason when cancelled.
 */
export async function fetchHttpsText(url: URL, spec: FetchSpec): Promise<string> {
  if (spec.signal.aborted) throw cancelled(spec, url);
  const timeoutMs = spec.timeoutMs ?? INPUT_READ_DEADLINE_MS;
  const expired = new AbortController();
  const done = new AbortController();
  const timer = setTimeout(() => expired.abort(), timeoutMs);
  const signal = AbortSignal.any([spec.signal, expired.signal, done.signal]);
  // Verification is explicit: Bun's default follows NODE_TLS_REJECT_UNAUTHORIZED.
  const tls = { rejectUnauthorized: true, ...(spec.ca ? { ca: [...rootCertificates, spec.ca] } : {}) };
  let current = url;
  try {
    for (let hop = 0; ; hop++) {
      const res = await fetch(current, {
        redirect: "manual",
        signal,
        tls,
        headers: { accept: "application/yaml, application/json;q=0.9, text/plain;q=0.8, */*;q=0.5" },
      });
      if (REDIRECTS.has(res.status)) {
        await res.body?.cancel().catch(() => undefined);
        if (hop === MAX_REDIRECTS)
          throw refusal(
            "INVALID_REQUEST",
            url.href,
            spec,
            `more than ${MAX_REDIRECTS} redirects`,
            `check the URL (a redirect loop?), or ${downloadRemedy(url.href, spec)}`,
          );
        current = redirectTarget(url, current, res.headers.get("location"), spec);
        continue;
      }
      if (res.status < 200 || res.status > 299 || res.status === 206) {
        await res.body?.cancel().catch(() => undefined);
        const where = current === url ? "" : ` (redirected to ${maskUrl(current)})`;
        throw refusal(
          statusCode(res.status),
          url.href,
          spec,
          `the server answered HTTP ${res.status}${where}`,
          res.status === 404 || res.status === 410
            ? `check the URL, or ${downloadRemedy(url.href, spec)}`
            : res.status >= 500 || res.status === 429 || res.status === 408
              ? `retry later, or ${downloadRemedy(url.href, spec)}`
              : downloadRemedy(url.href, spec),
        );
      }
      const decoded = decodeUtf8(await readCapped(res, url, spec));
      if ("badOffset" in decoded)
        throw refusal(
          "INVALID_REQUEST",
          url.href,
          spec,
          `not UTF-8 text (an invalid byte at offset ${decoded.badOffset})`,
          `check the URL names a ${spec.what} (YAML or JSON)`,
        );
      return decoded.text.startsWith("\uFEFF") ? decoded.text.slice(1) : decoded.text;
    }
  } catch (err) {
    if (err instanceof AicrError) throw err;
    if (spec.signal.aborted) throw cancelled(spec, url);
    if (expired.signal.aborted)
      throw refusal(
        "SERVICE_UNAVAILABLE",
        url.href,
        spec,
        `no whole answer from ${origin(current)} within ${timeoutMs / 1000} s`,
        `check the server and the network between; on an air-gapped host, ${downloadRemedy(url.href, spec)}`,
      );
    throw transportFailure(err, url, current, spec);
  } finally {
    clearTimeout(timer);
    // whatever is still open of the exchange (a body cut off at the cap) is closed with it
    done.abort();
  }
}

function cancelled(spec: FetchSpec, url: URL): AicrError {
  return spec.signal.reason instanceof AicrError
    ? spec.signal.reason
    : refusal("CANCELED", url.href, spec, "cancelled while fetching", "run the command again");
}

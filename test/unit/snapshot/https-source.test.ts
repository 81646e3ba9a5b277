/**
 * The https:// source of validate -r/-s against a loopback TLS server with the test CA: the URL's
 * checks before any request, verified TLS (never NODE_TLS_REJECT_UNAUTHORIZED's say), same-host
 * redirects only, the cap while streaming, strict UTF-8, the bound and the cancel signal, and every
 * message with the URL masked.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AicrError } from "../../../src/core/errors.ts";
import {
  type FetchSpec,
  fetchHttpsText,
  looksLikeUrl,
  MAX_REDIRECTS,
  parseHttpsUrl,
} from "../../../src/snapshot/_https-source.ts";
import { type DocsServer, startDocsServer } from "../../support/https-docs.ts";
import { rejection, thrown } from "../../support/reject.ts";
import { until } from "../../support/until.ts";

const RECIPE = "kind: RecipeMetadata\nspec:\n  constraints: []\n";
const NAMES = { flag: "--recipe", what: "recipe", command: "aicr validate" };

let dir: string;
let docs: DocsServer;
let ca: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-https-source-"));
  docs = startDocsServer({ "/recipe.yaml": RECIPE, "/bom.yaml": `\uFEFF${RECIPE}` }, dir);
  ca = readFileSync(docs.caFile, "utf8");
});
afterAll(() => {
  docs?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const spec = (o: Partial<FetchSpec> = {}): FetchSpec => ({
  ...NAMES,
  maxBytes: 1024,
  ca,
  signal: new AbortController().signal,
  ...o,
});
const get = (path: string, o: Partial<FetchSpec> = {}) =>
  fetchHttpsText(parseHttpsUrl(docs.url(path), NAMES), spec(o));
const refused = (path: string, o: Partial<FetchSpec> = {}) => rejection(get(path, o));

describe("parseHttpsUrl: checked before any request", () => {
  test("an https:// URL parses; looksLikeUrl tells a URL from a path", () => {
    expect(parseHttpsUrl("https://example.com/r.yaml?ref=main", NAMES).href).toBe(
      "https://example.com/r.yaml?ref=main",
    );
    expect(parseHttpsUrl("HTTPS://Example.COM:8443/r.yaml", NAMES).host).toBe("example.com:8443");
    expect(looksLikeUrl("https://x/y")).toBe(true);
    expect(looksLikeUrl("recipes/h100.yaml")).toBe(false);
    expect(looksLikeUrl("C:\\recipes\\h100.yaml")).toBe(false);
  });

  test("http:// is refused (exit 2) with the https and the download remedies", () => {
    const err = thrown(() => parseHttpsUrl("http://example.com/r.yaml", NAMES));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toBe(
      '--recipe "http://example.com/r.yaml": plain http:// is refused: the document would travel unencrypted and unauthenticated',
    );
    expect(err.remedy).toContain("serve it over https:// (--ca-file <pem> trusts a private CA)");
    expect(err.remedy).toContain(
      "curl -fsSLo recipe.yaml 'http://example.com/r.yaml' && aicr validate --recipe recipe.yaml",
    );
  });

  test("other schemes, whitespace, a missing host and a malformed URL are refused", () => {
    expect(thrown(() => parseHttpsUrl("ftp://example.com/r.yaml", NAMES)).message).toContain(
      "ftp:// is not a source aicr reads",
    );
    expect(thrown(() => parseHttpsUrl("https://exa\tmple.com/r.yaml", NAMES)).message).toContain(
      "whitespace or a control character",
    );
    expect(thrown(() => parseHttpsUrl("https://exa mple.com/", NAMES)).code).toBe("INVALID_REQUEST");
    expect(thrown(() => parseHttpsUrl("https://", NAMES)).code).toBe("INVALID_REQUEST");
    expect(thrown(() => parseHttpsUrl("https://[::1/r.yaml", NAMES)).message).toContain("not a valid URL");
  });

  test("user:password@ is refused, masked in the message, the context and the remedy", () => {
    for (const value of [
      "https://admin:s3cret@example.com/r.yaml",
      "https://s3cret@example.com/r.yaml",
      "https://:s3cret@example.com/r.yaml",
    ]) {
      const err = thrown(() => parseHttpsUrl(value, NAMES));
      expect(err.code).toBe("INVALID_REQUEST");
      expect(err.message).toBe(
        '--recipe "https://***@example.com/r.yaml": credentials in a URL are refused (they would reach logs, reports and shell history)',
      );
      expect(JSON.stringify([err.message, err.remedy, err.context])).not.toContain("s3cret");
      expect(err.remedy).toContain("'<url>'");
    }
  });
});

describe("fetchHttpsText", () => {
  test("the document, verified with --ca-file's CA; a BOM dropped; gzip decoded", async () => {
    expect(await get("/recipe.yaml")).toBe(RECIPE);
    expect(await get("/bom.yaml")).toBe(RECIPE);
    expect(await get("/gzip/recipe.yaml")).toBe(RECIPE);
  });

  test("a certificate the system roots do not trust is refused (6), even with NODE_TLS_REJECT_UNAUTHORIZED=0", async () => {
    const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    try {
      for (const env of [undefined, "0"]) {
        if (env === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
        else process.env.NODE_TLS_REJECT_UNAUTHORIZED = env;
        const err = await refused("/recipe.yaml", { ca: undefined });
        expect(err.code).toBe("SERVICE_UNAVAILABLE");
        expect(err.message).toContain(`the certificate of 127.0.0.1:${docs.port} is not trusted`);
        expect(err.remedy).toContain("pass --ca-file <pem> with the CA that issued it");
        expect(err.remedy).toContain(`curl -fsSLo recipe.yaml '${docs.url("/recipe.yaml")}'`);
      }
    } finally {
      if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
    }
  });

  test("a --ca-file of another CA does not make the server trusted", async () => {
    const err = await refused("/recipe.yaml", { ca: readFileSync(docs.otherCaFile, "utf8") });
    expect(err.code).toBe("SERVICE_UNAVAILABLE");
    expect(err.message).toContain("is not trusted");
  });

  test("same-host redirects are followed: absolute path, relative, two in a row", async () => {
    expect(await get("/redirect/same")).toBe(RECIPE);
    expect(await get("/redirect/relative")).toBe(RECIPE);
    expect(await get("/redirect/twice")).toBe(RECIPE);
  });

  test("a redirect to another host or port is refused naming both, and never followed", async () => {
    const host = `127.0.0.1:${docs.port}`;
    const sent = docs.requests.length;
    const other = await refused("/redirect/localhost");
    expect(other.code).toBe("INVALID_REQUEST");
    expect(other.message).toContain(
      `redirected from ${host} to localhost:${docs.port}: aicr follows a redirect only within the same host (https, same host and port)`,
    );
    expect(other.remedy).toContain(`pass the URL on localhost:${docs.port} itself if you trust that host`);
    const port = await refused("/redirect/port");
    expect(port.message).toContain(`redirected from ${host} to 127.0.0.1:${docs.port + 1}`);
    const plain = await refused("/redirect/http");
    expect(plain.message).toContain(`redirected from ${host} to http://${host}`);
    // each asked once: the redirect's target was never requested
    expect(docs.requests.slice(sent)).toEqual(["/redirect/localhost", "/redirect/port", "/redirect/http"]);
  });

  test(`a redirect loop stops after ${MAX_REDIRECTS} redirects`, async () => {
    const sent = docs.requests.length;
    const err = await refused("/redirect/loop");
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toContain(`more than ${MAX_REDIRECTS} redirects`);
    expect(docs.requests.length - sent).toBe(MAX_REDIRECTS + 1);
  });

  test("a non-2xx answer: 404 NOT_FOUND, 403 UNAUTHORIZED, 503 SERVICE_UNAVAILABLE, 400 INVALID_REQUEST", async () => {
    const cases: [number, string][] = [
      [404, "NOT_FOUND"],
      [410, "NOT_FOUND"],
      [403, "UNAUTHORIZED"],
      [429, "RATE_LIMIT_EXCEEDED"],
      [503, "SERVICE_UNAVAILABLE"],
      [400, "INVALID_REQUEST"],
    ];
    for (const [status, code] of cases) {
      const err = await refused(`/status/${status}`);
      expect(err.code).toBe(code as AicrError["code"]);
      expect(err.message).toBe(
        `--recipe "${docs.url(`/status/${status}`)}": the server answered HTTP ${status}`,
      );
      expect(err.remedy).toContain("&& aicr validate --recipe recipe.yaml");
    }
  });

  test("an announced body over the cap is refused before it is read", async () => {
    const err = await rejection(fetchHttpsText(parseHttpsUrl(docs.announced, NAMES), spec()));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toContain(
      "the server announces 10485760 bytes, above the 1024 bytes limit of a recipe",
    );
  });

  test("a body that grows past the cap is cut off and its stream closed", async () => {
    const err = await refused("/endless", { maxBytes: 256 * 1024 });
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toContain("more than 262144 bytes sent, above the 262144 bytes limit of a recipe");
    await until(() => docs.endless.closed, "the endless body closed by the client", 10_000);
  });

  test("invalid UTF-8 is refused with its offset, as a file's", async () => {
    const err = await refused("/invalid-utf8");
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toContain("not UTF-8 text (an invalid byte at offset 3)");
  });

  test("a stalled body ends at the bound: SERVICE_UNAVAILABLE, with the air-gap remedy", async () => {
    const err = await refused("/stall", { timeoutMs: 300 });
    expect(err.code).toBe("SERVICE_UNAVAILABLE");
    expect(err.message).toContain(`no whole answer from 127.0.0.1:${docs.port} within 0.3 s`);
    expect(err.remedy).toContain(
      "on an air-gapped host, download it where the URL is reachable and pass the file",
    );
  });

  test("the cancel signal ends the fetch with its own reason", async () => {
    const cancel = new AbortController();
    const reason = new AicrError("CANCELED", "cancelled by SIGINT");
    const pending = get("/stall", { signal: cancel.signal });
    setTimeout(() => cancel.abort(reason), 100);
    expect(await rejection(pending)).toBe(reason);
    // aborted before the call: no request
    const sent = docs.requests.length;
    expect(await rejection(get("/recipe.yaml", { signal: cancel.signal }))).toBe(reason);
    expect(docs.requests.length).toBe(sent);
  });

  test("nobody listening: SERVICE_UNAVAILABLE naming the host, and the download remedy", async () => {
    const gone = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const port = gone.port as number;
    gone.stop(true);
    const url = `https://127.0.0.1:${port}/recipe.yaml`;
    const err = await rejection(fetchHttpsText(parseHttpsUrl(url, NAMES), spec()));
    expect(err.code).toBe("SERVICE_UNAVAILABLE");
    expect(err.message).toStartWith(`--recipe "${url}": cannot fetch it from 127.0.0.1:${port}: `);
    expect(err.remedy).toBe(
      `check the URL, that the server is up and what lies between (proxy, firewall); on an air-gapped host, download it where the URL is reachable and pass the file, e.g. curl -fsSLo recipe.yaml '${url}' && aicr validate --recipe recipe.yaml`,
    );
  });

  test("query values are masked in every message; the remedy then names <url>", async () => {
    const err = await rejection(
      fetchHttpsText(parseHttpsUrl(docs.url("/status/404?token=s3cret&ref=main#frag"), NAMES), spec()),
    );
    expect(err.message).toBe(
      `--recipe "${docs.url("/status/404?token=***&ref=***#***")}": the server answered HTTP 404`,
    );
    expect(JSON.stringify([err.message, err.remedy, err.context])).not.toContain("s3cret");
    expect(err.remedy).toContain("curl -fsSLo recipe.yaml '<url>' && aicr validate --recipe recipe.yaml");
  });
});

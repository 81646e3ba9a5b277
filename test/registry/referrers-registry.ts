/**
 * A small in-memory OCI registry with the referrers API, for the push and verify tests until the
 * real one (go-containerregistry's, test/tools/) is built: blobs (monolithic and chunked uploads),
 * manifests by digest and tag, GET /v2/<repo>/referrers/<digest>, and the OCI-Subject header on a
 * manifest PUT with a subject. Plain HTTP on loopback, no auth. It is the HTTP boundary of the
 * tests, not a model of aicr.
 */
import { sha256Digest } from "../../src/image/_oci.ts";

export interface FakeRegistry {
  host: string;
  url: string;
  /** Every request, "METHOD /path". */
  seen: string[];
  /** What PUTs and uploads changed: "PUT /v2/…", "POST /v2/…". */
  writes(): string[];
  stop(): void;
}

export interface FakeOptions {
  /** Send OCI-Subject on a referrer's PUT (default true); the referrers endpoint is there either way. */
  subjectHeader?: boolean;
}

const json = (status: number, body: unknown, type = "application/json") =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": type } });
const missing = (code: string) => json(404, { errors: [{ code, message: code.toLowerCase() }] });

export function startReferrersRegistry(o: FakeOptions = {}): FakeRegistry {
  const blobs = new Map<string, Uint8Array>();
  const uploads = new Map<string, Uint8Array[]>();
  const manifests = new Map<string, { type: string; bytes: Uint8Array }>(); // "<repo>@<ref>"
  const seen: string[] = [];
  let next = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const path = url.pathname;
      seen.push(`${req.method} ${path}${url.search}`);
      if (path === "/v2/") return json(200, {});
      const m = /^\/v2\/(.+)\/(manifests|blobs|referrers)\/(.+)$/.exec(path);
      if (!m) return missing("NOT_FOUND");
      const [, repo, kind, ref] = m as unknown as [string, string, string, string];
      if (kind === "blobs" && ref.startsWith("uploads/")) {
        const id = ref === "uploads/" ? String(++next) : ref.slice("uploads/".length);
        const parts = uploads.get(id) ?? [];
        uploads.set(id, parts);
        if (req.method === "POST")
          return new Response(null, {
            status: 202,
            headers: { location: `/v2/${repo}/blobs/uploads/${id}` },
          });
        const body = new Uint8Array(await req.arrayBuffer());
        if (body.length > 0) parts.push(body);
        if (req.method === "PATCH")
          return new Response(null, {
            status: 202,
            headers: { location: `/v2/${repo}/blobs/uploads/${id}` },
          });
        const data = new Uint8Array(Buffer.concat(parts));
        const digest = url.searchParams.get("digest") ?? "";
        if (sha256Digest(data) !== digest) return json(400, { errors: [{ code: "DIGEST_INVALID" }] });
        blobs.set(digest, data);
        uploads.delete(id);
        return new Response(null, { status: 201, headers: { "docker-content-digest": digest } });
      }
      if (kind === "blobs") {
        const data = blobs.get(ref);
        if (!data) return missing("BLOB_UNKNOWN");
        return new Response(req.method === "HEAD" ? null : data, {
          headers: { "content-length": String(data.length) },
        });
      }
      if (kind === "referrers") {
        const list = [...manifests].flatMap(([key, v]) => {
          if (!key.startsWith(`${repo}@sha256:`)) return [];
          const parsed = JSON.parse(new TextDecoder().decode(v.bytes));
          if (parsed.subject?.digest !== ref) return [];
          return [
            {
              mediaType: v.type,
              digest: key.slice(repo.length + 1),
              size: v.bytes.length,
              artifactType: parsed.artifactType ?? parsed.config?.mediaType,
              ...(parsed.annotations ? { annotations: parsed.annotations } : {}),
            },
          ];
        });
        const index = {
          schemaVersion: 2,
          mediaType: "application/vnd.oci.image.index.v1+json",
          manifests: list,
        };
        return json(200, index, "application/vnd.oci.image.index.v1+json");
      }
      const key = `${repo}@${ref}`;
      if (req.method === "PUT") {
        const bytes = new Uint8Array(await req.arrayBuffer());
        const digest = sha256Digest(bytes);
        const type = req.headers.get("content-type") ?? "";
        manifests.set(key, { type, bytes });
        manifests.set(`${repo}@${digest}`, { type, bytes });
        const subject = JSON.parse(new TextDecoder().decode(bytes)).subject?.digest;
        const headers: Record<string, string> = { "docker-content-digest": digest };
        if (subject && o.subjectHeader !== false) headers["oci-subject"] = subject;
        return new Response(null, { status: 201, headers });
      }
      const found = manifests.get(key);
      if (!found) return missing("MANIFEST_UNKNOWN");
      const headers = {
        "content-type": found.type,
        "content-length": String(found.bytes.length),
        "docker-content-digest": sha256Digest(found.bytes),
      };
      return new Response(req.method === "HEAD" ? null : found.bytes, { headers });
    },
  });
  const host = `127.0.0.1:${server.port}`;
  return {
    host,
    url: `http://${host}`,
    seen,
    writes: () => seen.filter((s) => /^(PUT|POST|PATCH) /.test(s)),
    stop: () => server.stop(true),
  };
}

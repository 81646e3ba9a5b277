/**
 * One blob onto the registry: HEAD (present → done), else a cross-repository mount when a source
 * is given, else an upload — one PUT up to the chunk size, PATCHes of chunk-size pieces with
 * Content-Range above it, then the closing PUT with the digest. The registry's digest is checked.
 */
import type { RegistryClient } from "./_client.ts";
import { httpError, protocolError } from "./_errors.ts";
import { drain } from "./_http.ts";

export type BlobOutcome = "present" | "mounted" | "uploaded";

export interface BlobTarget {
  client: RegistryClient;
  registry: string;
  repository: string;
  mountFrom?: string | undefined;
  chunkSize: number;
}

const OCTET = "application/octet-stream";

export async function blobExists(t: BlobTarget, digest: string): Promise<boolean> {
  const res = await t.client.send(`/v2/${t.repository}/blobs/${digest}`, { method: "HEAD" });
  await drain(res);
  // a redirect points at the blob's storage: it exists
  if (res.ok || (res.status >= 300 && res.status < 400)) return true;
  if (res.status === 404) return false;
  throw await httpError(res, `Checking blob ${digest}`, t.registry);
}

/** POST an upload session (or a mount); 201 = mounted, else the session's URL. */
async function startUpload(t: BlobTarget, digest: string): Promise<URL | "mounted"> {
  const query = t.mountFrom
    ? `?mount=${encodeURIComponent(digest)}&from=${encodeURIComponent(t.mountFrom)}`
    : "";
  const res = await t.client.send(`/v2/${t.repository}/blobs/uploads/${query}`, {
    method: "POST",
    headers: { "content-length": "0" },
  });
  if (res.status === 201 && t.mountFrom) {
    await drain(res);
    return "mounted";
  }
  if (res.status !== 202) {
    if (res.ok) await drain(res);
    throw res.ok
      ? protocolError(`Starting the upload of ${digest}`, t.registry, `HTTP ${res.status} instead of 202`)
      : await httpError(res, `Starting the upload of ${digest}`, t.registry);
  }
  await drain(res);
  return location(t, res, `Starting the upload of ${digest}`);
}

function location(t: BlobTarget, res: Response, doing: string): URL {
  const loc = res.headers.get("location");
  if (!loc) throw protocolError(doing, t.registry, "the answer has no Location header");
  return t.client.resolve(loc);
}

async function patchChunks(t: BlobTarget, at: URL, bytes: Uint8Array, digest: string): Promise<URL> {
  let url = at;
  for (let start = 0; start < bytes.length; start += t.chunkSize) {
    const chunk = bytes.subarray(start, Math.min(bytes.length, start + t.chunkSize));
    const end = start + chunk.length - 1;
    const res = await t.client.send(url, {
      method: "PATCH",
      headers: {
        "content-type": OCTET,
        "content-range": `${start}-${end}`,
        "content-length": String(chunk.length),
      },
      body: chunk,
    });
    const doing = `Uploading bytes ${start}-${end} of ${digest}`;
    if (res.status !== 202)
      throw res.ok
        ? protocolError(doing, t.registry, `HTTP ${res.status}`)
        : await httpError(res, doing, t.registry);
    await drain(res);
    url = location(t, res, doing);
  }
  return url;
}

async function upload(t: BlobTarget, at: URL, bytes: Uint8Array, digest: string): Promise<void> {
  const chunked = bytes.length > t.chunkSize;
  const url = new URL(chunked ? await patchChunks(t, at, bytes, digest) : at);
  url.searchParams.set("digest", digest);
  const res = await t.client.send(url, {
    method: "PUT",
    headers: chunked
      ? { "content-length": "0" }
      : { "content-type": OCTET, "content-length": String(bytes.length) },
    ...(chunked ? {} : { body: bytes }),
  });
  const doing = `Completing the upload of ${digest}`;
  if (res.status !== 201 && res.status !== 204) {
    throw res.ok
      ? protocolError(doing, t.registry, `HTTP ${res.status}`)
      : await httpError(res, doing, t.registry);
  }
  await drain(res);
  const stored = res.headers.get("docker-content-digest");
  if (stored && stored !== digest) throw protocolError(doing, t.registry, `it stored the blob as ${stored}`);
}

/** Puts one blob in place; the caller retries the whole call on a transient failure. */
export async function ensureBlob(t: BlobTarget, digest: string, bytes: Uint8Array): Promise<BlobOutcome> {
  if (await blobExists(t, digest)) return "present";
  const started = await startUpload(t, digest);
  if (started === "mounted") return "mounted";
  await upload(t, started, bytes, digest);
  return "uploaded";
}

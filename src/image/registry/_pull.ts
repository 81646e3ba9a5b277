/**
 * Reads from a registry, each checked against the digest that names it: a manifest or index by tag
 * or digest (at most 4 MiB, as distribution caps them), a blob streamed and hashed (its size checked
 * as bytes arrive, so a registry that sends more stops being read; kept in memory only when the
 * caller asks and it is small; redirects to blob storage followed without credentials). A 404 is
 * `undefined`: the caller says what was missing. Content that does not match its digest or its
 * descriptor is a ContentError.
 */
import { AicrError } from "../../core/errors.ts";
import { isDigest, MEDIA, sha256Digest } from "../_oci.ts";
import type { RegistryClient } from "./_client.ts";
import { httpError, protocolError } from "./_errors.ts";
import { drain } from "./_http.ts";
import { TAG } from "./_reference.ts";

export interface PullTarget {
  client: RegistryClient;
  registry: string;
  repository: string;
}

/** What a manifest GET accepts: every index and manifest type an image may be stored as. */
export const MANIFEST_ACCEPT = [MEDIA.index, MEDIA.manifest, MEDIA.dockerList, MEDIA.dockerManifest].join(
  ", ",
);

/** distribution's own limit on a manifest's size. */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

/** At most this many redirects to a blob's storage. */
const MAX_REDIRECTS = 5;

/**
 * Content that is not what its digest or descriptor says (or larger than allowed): the message is
 * the reason. UNAUTHORIZED, as any content that fails its check: it must not be used.
 */
export class ContentError extends AicrError {
  constructor(reason: string, registry?: string) {
    super("UNAUTHORIZED", reason, {
      remedy:
        "the registry (or something between it and here) serves content that is not what its digest names; do not use it, and tell the registry's administrator",
      context: registry ? { registry } : {},
    });
  }
}

export interface PulledManifest {
  /** The digest of the bytes received (for a digest reference: that digest, checked). */
  digest: string;
  mediaType: string;
  bytes: Uint8Array;
}

/** The body, read until `max` bytes at most; more is a ContentError naming `what`. */
export async function readBounded(res: Response, max: number, what: string): Promise<Uint8Array> {
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  if (declared > max) {
    await res.body?.cancel().catch(() => undefined);
    throw new ContentError(`${what} is ${declared} bytes, more than the ${max} allowed`);
  }
  const chunks: Uint8Array[] = [];
  let n = 0;
  if (res.body) {
    for await (const chunk of res.body) {
      n += chunk.length;
      // leaving the loop cancels the stream: nothing more is read
      if (n > max) throw new ContentError(`${what} is more than the ${max} bytes allowed`);
      chunks.push(chunk);
    }
  }
  return new Uint8Array(Buffer.concat(chunks, n));
}

/**
 * GET a manifest or index by tag or digest. By digest, the bytes must hash to it; by tag, the
 * registry's Docker-Content-Digest (when sent) must be the bytes' digest. undefined on 404.
 */
export async function getManifest(t: PullTarget, ref: string): Promise<PulledManifest | undefined> {
  if (!isDigest(ref) && !TAG.test(ref))
    throw new ContentError(`${JSON.stringify(ref.slice(0, 80))} is neither a sha256 digest nor a tag`);
  const res = await t.client.send(`/v2/${t.repository}/manifests/${ref}`, {
    method: "GET",
    headers: { accept: MANIFEST_ACCEPT },
  });
  const doing = `Reading manifest ${ref}`;
  if (!(await found(res, doing, t.registry))) return undefined;
  const what = isDigest(ref) ? `manifest ${ref}` : `the manifest tagged ${ref}`;
  const bytes = await readBounded(res, MAX_MANIFEST_BYTES, what);
  const digest = sha256Digest(bytes);
  if (isDigest(ref) && digest !== ref) throw new ContentError(`${what} has digest ${digest}`, t.registry);
  const said = res.headers.get("docker-content-digest");
  if (said && isDigest(said) && said !== digest)
    throw new ContentError(`${what} has digest ${digest}, the registry names it ${said}`, t.registry);
  return { digest, mediaType: mediaTypeOf(res.headers.get("content-type"), bytes), bytes };
}

/** 200 → true (the body is the caller's to read); 404 → false; anything else → the error it is. */
async function found(res: Response, doing: string, registry: string): Promise<boolean> {
  if (res.status === 404) {
    await drain(res);
    return false;
  }
  if (res.status === 200) return true;
  if (res.ok) {
    await drain(res);
    throw protocolError(doing, registry, `HTTP ${res.status}`);
  }
  throw await httpError(res, doing, registry);
}

/** The Content-Type without parameters; when absent or generic, the body's own mediaType field. */
function mediaTypeOf(header: string | null, bytes: Uint8Array): string {
  const type = header?.split(";")[0]?.trim() ?? "";
  if (type && type !== "application/json" && type !== "application/octet-stream") return type;
  try {
    const m = (JSON.parse(new TextDecoder().decode(bytes)) as { mediaType?: unknown }).mediaType;
    return typeof m === "string" ? m : type;
  } catch {
    return type;
  }
}

export interface BlobRead {
  /** The bytes, when `keep` was asked. */
  bytes?: Uint8Array;
  size: number;
}

/**
 * GET a blob (following redirects to its storage, which get no credentials), hashed as it streams.
 * It must be exactly `size` bytes and hash to `digest`; `what` names it in a ContentError ("layer").
 * With `keep`, the bytes are returned; `size` above `maxKeep` is refused before any request.
 * undefined on 404.
 */
export async function fetchBlob(
  t: PullTarget,
  d: { digest: string; size: number },
  what: string,
  o: { keep?: boolean; maxKeep?: number } = {},
): Promise<BlobRead | undefined> {
  if (!isDigest(d.digest))
    throw new ContentError(
      `${what} ${JSON.stringify(String(d.digest).slice(0, 80))} is not named by a sha256 digest`,
    );
  if (!Number.isSafeInteger(d.size) || d.size < 0)
    throw new ContentError(`${what} ${d.digest} has no valid size in its descriptor`);
  if (o.keep && o.maxKeep !== undefined && d.size > o.maxKeep)
    throw new ContentError(`${what} ${d.digest} is ${d.size} bytes, more than the ${o.maxKeep} allowed`);
  const doing = `Reading blob ${d.digest}`;
  let url: string | URL = `/v2/${t.repository}/blobs/${d.digest}`;
  let res = await t.client.send(url, { method: "GET" });
  for (let hops = 0; res.status >= 300 && res.status < 400; hops++) {
    const location = res.headers.get("location");
    await drain(res);
    if (!location || hops === MAX_REDIRECTS)
      throw protocolError(
        doing,
        t.registry,
        location ? "too many redirects" : `HTTP ${res.status} without a Location`,
      );
    url = t.client.resolve(location);
    res = await t.client.send(url, { method: "GET" });
  }
  if (!(await found(res, doing, t.registry))) return undefined;
  const hash = new Bun.CryptoHasher("sha256");
  const chunks: Uint8Array[] = [];
  let n = 0;
  if (res.body) {
    for await (const chunk of res.body) {
      n += chunk.length;
      if (n > d.size)
        throw new ContentError(
          `${what} ${d.digest} has more than the ${d.size} bytes its descriptor says`,
          t.registry,
        );
      hash.update(chunk);
      if (o.keep) chunks.push(chunk);
    }
  }
  if (n !== d.size)
    throw new ContentError(`${what} ${d.digest} has ${n} bytes, its descriptor says ${d.size}`, t.registry);
  const actual = `sha256:${hash.digest("hex")}`;
  if (actual !== d.digest) throw new ContentError(`${what} ${d.digest} has digest ${actual}`, t.registry);
  return o.keep ? { bytes: new Uint8Array(Buffer.concat(chunks, n)), size: n } : { size: n };
}

/**
 * Shared steps of the push tests: push an archive through the library with a captured log, and
 * read an image back from the registry (manifests by tag and digest, every blob re-hashed).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "../../src/core/log.ts";
import { readOciArchive } from "../../src/image/_archive.ts";
import { MEDIA, sha256Digest } from "../../src/image/_oci.ts";
import { parsePushTarget } from "../../src/image/registry/_reference.ts";
import type { Credentials } from "../../src/image/registry/credentials.ts";
import { type PushOptions, type PushResult, pushArchive } from "../../src/image/registry/push.ts";
import type { TestArchive } from "./archive.ts";

/** Small enough that the big test layer goes up in several PATCHes. */
export const TEST_CHUNK = 64 * 1024;

/** Writes the archive as `image.tar` in a fresh directory under `dir` (the caller's, removed by it); its path. */
export function writeArchive(a: TestArchive, dir: string): string {
  const path = join(mkdtempSync(join(dir, "archive-")), "image.tar");
  writeFileSync(path, a.bytes);
  return path;
}

export interface PushRun {
  result: PushResult;
  log: string[];
}

export async function pushTo(
  destination: string,
  archive: TestArchive,
  extra: Partial<PushOptions> & { credentials?: Credentials | undefined } = {},
): Promise<PushRun> {
  const log: string[] = [];
  const result = await pushArchive({
    archive: readOciArchive(archive.bytes),
    archivePath: "test.tar",
    target: parsePushTarget(destination),
    chunkSize: TEST_CHUNK,
    retry: { attempts: 3, baseDelayMs: 10 },
    signal: new AbortController().signal,
    log: createLogger({ debug: true, write: (l) => void log.push(l) }),
    ...extra,
  });
  return { result, log };
}

export const basic = (user: string, password: string): Credentials => ({
  kind: "basic",
  username: user,
  password,
  source: "test",
});

/** A pull with plain fetch: the test's own reading of the registry, independent of the pusher. */
export async function readBack(
  url: string,
  repo: string,
  tagOrDigest: string,
  o: { ca?: string; auth?: string } = {},
): Promise<{ digest: string; mediaType: string; bytes: Uint8Array }> {
  const headers: Record<string, string> = {
    accept: [MEDIA.index, MEDIA.manifest, MEDIA.dockerList, MEDIA.dockerManifest].join(", "),
    ...(o.auth ? { authorization: o.auth } : {}),
  };
  const res = await fetch(`${url}/v2/${repo}/manifests/${tagOrDigest}`, {
    headers,
    ...(o.ca ? { tls: { ca: o.ca } } : {}),
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200)
    throw new Error(`GET manifest ${tagOrDigest}: HTTP ${res.status} ${new TextDecoder().decode(bytes)}`);
  return { digest: sha256Digest(bytes), mediaType: res.headers.get("content-type") ?? "", bytes };
}

export async function blobDigest(
  url: string,
  repo: string,
  digest: string,
  o: { ca?: string; auth?: string } = {},
): Promise<string> {
  const res = await fetch(`${url}/v2/${repo}/blobs/${digest}`, {
    headers: o.auth ? { authorization: o.auth } : {},
    ...(o.ca ? { tls: { ca: o.ca } } : {}),
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`GET blob ${digest}: HTTP ${res.status}`);
  return sha256Digest(bytes);
}

export const basicAuth = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

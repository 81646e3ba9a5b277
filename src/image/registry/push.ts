/**
 * pushArchive: an OCI archive onto a registry over the distribution API. Blobs first (each checked
 * with HEAD, so a second push uploads nothing and an interrupted push resumes at blob granularity),
 * then the platform manifests by digest (skipped when present), then the root by tag (always, so
 * the tag moves), then the referrers (SBOMs, provenance, signatures; _push-referrers.ts).
 */
import { AicrError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import type { OciArchive } from "../_archive.ts";
import { type BlobOutcome, type BlobTarget, ensureBlob } from "./_blobs.ts";
import { RegistryClient } from "./_client.ts";
import { httpError, protocolError } from "./_errors.ts";
import { drain } from "./_http.ts";
import { manifestExists, putManifest } from "./_manifests.ts";
import { planPush } from "./_plan.ts";
import { pushReferrers, type ReferrersTally } from "./_push-referrers.ts";
import type { PushTarget } from "./_reference.ts";
import { DEFAULT_RETRY, type RetryPolicy, withRetries } from "./_retry.ts";
import type { Credentials } from "./credentials.ts";

export interface PushOptions {
  archive: OciArchive;
  /** The archive's file name, for messages. */
  archivePath: string;
  target: PushTarget;
  credentials?: Credentials | undefined;
  plainHttp?: boolean | undefined;
  /** Extra CA certificates (PEM), trusted besides the system roots. */
  ca?: string | undefined;
  /** A repository on the same registry to mount blobs from instead of uploading them. */
  mountFrom?: string | undefined;
  /** Blobs up to this size go in one PUT; larger ones in PATCHes of this size (default 8 MiB). */
  chunkSize?: number | undefined;
  retry?: RetryPolicy | undefined;
  /** Blobs in flight at once (default 3). */
  concurrency?: number | undefined;
  signal: AbortSignal;
  log: Logger;
}

export interface Tally {
  blobs: number;
  bytes: number;
}

export interface PushResult {
  /** `<registry>/<repository>@<digest>` */
  reference: string;
  tag: string;
  /** The digest of the root (the index, for a multi-platform image). */
  digest: string;
  uploaded: Tally;
  skipped: Tally;
  mounted: Tally;
  manifests: { put: number; skipped: number };
  referrers: ReferrersTally;
}

export const DEFAULT_CHUNK_SIZE = 8 * 1024 * 1024;

/** 1.5 MiB, 12.0 KiB, 300 B */
export const formatSize = (n: number): string =>
  n >= 1024 * 1024
    ? `${(n / 1024 / 1024).toFixed(1)} MiB`
    : n >= 1024
      ? `${(n / 1024).toFixed(1)} KiB`
      : `${n} B`;

/** At most `limit` in flight; after a failure nothing new starts, and the first failure is thrown once all settle. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (!failure && next < items.length) {
      try {
        await work(items[next++]!);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failure) throw failure.err;
}

export async function pushArchive(o: PushOptions): Promise<PushResult> {
  const { target, log, signal } = o;
  const plan = planPush(o.archive, target.tag, o.archivePath);
  const scopes = [`repository:${target.repository}:pull,push`];
  if (o.mountFrom) scopes.push(`repository:${o.mountFrom}:pull`);
  const client = new RegistryClient({
    registry: target.registry,
    apiHost: target.apiHost,
    repository: target.repository,
    plainHttp: Boolean(o.plainHttp),
    ca: o.ca,
    credentials: o.credentials,
    scopes,
    signal,
    log,
  });
  const retry = o.retry ?? DEFAULT_RETRY;
  const step = <T>(what: string, fn: () => Promise<T>) => withRetries(what, retry, signal, log, fn);

  // one round trip settles reachability, TLS and credentials before any blob moves
  await step("Contacting the registry", async () => {
    const res = await client.send("/v2/", { method: "GET" });
    if (res.ok) return drain(res);
    if (res.status === 400 && o.plainHttp) {
      await drain(res);
      throw new AicrError(
        "INVALID_REQUEST",
        `The registry ${JSON.stringify(target.registry)} refused a plain HTTP request`,
        {
          remedy: "it serves HTTPS on this port: drop --plain-http (and pass --ca-file for a private CA)",
          context: { registry: target.registry, status: 400 },
        },
      );
    }
    if (res.status === 404)
      throw protocolError("GET /v2/", target.registry, "HTTP 404: not an OCI distribution registry");
    throw await httpError(res, "Contacting the registry", target.registry);
  });

  const tally = {
    uploaded: { blobs: 0, bytes: 0 },
    skipped: { blobs: 0, bytes: 0 },
    mounted: { blobs: 0, bytes: 0 },
  };
  const where: Record<BlobOutcome, Tally> = {
    uploaded: tally.uploaded,
    present: tally.skipped,
    mounted: tally.mounted,
  };
  const blobTarget: BlobTarget = {
    client,
    registry: target.registry,
    repository: target.repository,
    mountFrom: o.mountFrom,
    chunkSize: o.chunkSize ?? DEFAULT_CHUNK_SIZE,
  };
  log.info(
    `Pushing ${plan.blobs.length} blobs, ${plan.manifests.length} manifests and ${plan.referrers.length} referrers to ${target.registry}/${target.repository}:${plan.tag}`,
  );
  await pool(plan.blobs, o.concurrency ?? 3, async (b) => {
    const outcome = await step(`Blob ${b.digest}`, () => ensureBlob(blobTarget, b.digest, b.bytes));
    where[outcome].blobs++;
    where[outcome].bytes += b.size;
    if (outcome === "present") log.debug("blob already present", { digest: b.digest, size: b.size });
    else
      log.info(
        `${outcome === "mounted" ? "Mounted" : "Uploaded"} ${b.digest.slice(0, 19)} (${formatSize(b.size)})`,
      );
  });

  const mt = { client, registry: target.registry, repository: target.repository };
  const manifests = { put: 0, skipped: 0 };
  for (const m of plan.manifests) {
    const isRoot = m === plan.root;
    await step(`Manifest ${m.digest}`, async () => {
      if (!isRoot && (await manifestExists(mt, m))) {
        manifests.skipped++;
        return;
      }
      await putManifest(mt, m, isRoot ? plan.tag : m.digest);
      manifests.put++;
    });
  }
  const referrers = await pushReferrers({ mt, blobs: blobTarget, referrers: plan.referrers, step, log });
  const reference = `${target.registry}/${target.repository}@${plan.root.digest}`;
  log.debug("push complete", { reference, tag: plan.tag });
  return { reference, tag: plan.tag, digest: plan.root.digest, ...tally, manifests, referrers };
}

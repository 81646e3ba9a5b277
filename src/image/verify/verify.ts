/**
 * verifyImage: the checks of an archive or a registry image against one public key, as a report
 * (report.ts). It reads; it never writes. A registry is read through the push's client (TLS
 * verified, --ca-file, plain HTTP only when asked, credentials only to the registry's own host),
 * with pull scope only.
 */
import type { Logger } from "../../core/log.ts";
import { isIndexMedia } from "../_oci.ts";
import { RegistryClient } from "../registry/_client.ts";
import type { RetryPolicy } from "../registry/_retry.ts";
import type { Credentials } from "../registry/credentials.ts";
import { archiveSource } from "./_archive-source.ts";
import { runChecks } from "./_checks.ts";
import { referenceText, registrySource } from "./_registry-source.ts";
import type { VerifyInputs } from "./options.ts";
import { report, type VerifyReport } from "./report.ts";

export interface VerifyOptions {
  inputs: VerifyInputs;
  credentials?: Credentials | undefined;
  retry?: RetryPolicy | undefined;
  signal: AbortSignal;
  log: Logger;
}

export async function verifyImage(o: VerifyOptions): Promise<VerifyReport> {
  const { target, key } = o.inputs;
  if (target.kind === "broken-archive") {
    const { root } = target;
    return report(target.path, root.digest, key.fingerprint, [
      {
        subject: root.digest,
        kind: isIndexMedia(root.mediaType) ? "index" : "manifest",
        check: "blobs",
        ok: false,
        reason: target.reason,
      },
    ]);
  }
  if (target.kind === "archive") {
    const { digest, checks } = await runChecks(archiveSource(target.archive, target.root), key);
    return report(target.path, digest, key.fingerprint, checks);
  }
  const { ref, access } = target;
  const client = new RegistryClient({
    registry: ref.registry,
    apiHost: ref.apiHost,
    repository: ref.repository,
    plainHttp: access.plainHttp,
    ca: access.ca,
    credentials: o.credentials,
    scopes: [`repository:${ref.repository}:pull`],
    access: "pull",
    signal: o.signal,
    log: o.log,
  });
  const source = registrySource({ client, ref, retry: o.retry, signal: o.signal, log: o.log });
  const { digest, checks } = await runChecks(source, key);
  return report(referenceText(ref), digest, key.fingerprint, checks);
}

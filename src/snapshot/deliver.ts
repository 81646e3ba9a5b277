import { retry } from "../core/async.ts";
import { checkFileDestination, writeFileAtomic } from "../core/files.ts";
import type { KubeClient } from "../kube/client.ts";
import { isTransient } from "../kube/errors.ts";
import { buildSnapshotConfigMap } from "./_configmap.ts";
import { type ConfigMapRef, isConfigMapUri, parseConfigMapUri } from "./cm-uri.ts";
import type { SnapshotFormat } from "./serialize.ts";

export type Destination =
  | { kind: "stdout" }
  | { kind: "file"; path: string }
  | { kind: "configmap"; ref: ConfigMapRef };

/** Parsed in full before anything is collected or created, so a typo fails first (exit 2). */
export function parseDestination(output: string | undefined): Destination {
  if (output === undefined || output === "" || output === "-" || output === "stdout")
    return { kind: "stdout" };
  if (isConfigMapUri(output)) return { kind: "configmap", ref: parseConfigMapUri(output) };
  return { kind: "file", path: output };
}

/**
 * The pre-flight of a file destination (see checkFileDestination), run before the transport connects:
 * a destination that cannot be written fails before anything is deployed or collected.
 */
export function checkDestination(dest: Destination, flag = "--output"): void {
  if (dest.kind === "file") checkFileDestination(dest.path, flag);
}

export function describeDestination(dest: Destination): string {
  if (dest.kind === "stdout") return "stdout";
  if (dest.kind === "file") return dest.path;
  return `cm://${dest.ref.namespace}/${dest.ref.name}`;
}

export interface DeliverOptions {
  content: string;
  format: SnapshotFormat;
  timestamp: string;
  version: string;
  /** Set when the destination is the run's staging ConfigMap (the agent's Job owns it). */
  ownerJob?: { name: string; uid: string } | undefined;
  /** Needed only for a ConfigMap destination. */
  client?: KubeClient | undefined;
  writeStdout: (text: string) => void;
  /** Cancels the ConfigMap apply: the request in flight is abandoned, no new attempt, no pause kept. */
  signal?: AbortSignal | undefined;
}

/** The snapshot's bytes to their destination; a ConfigMap is written by server-side apply (manager `aicr`, force). */
export async function deliverSnapshot(dest: Destination, options: DeliverOptions): Promise<void> {
  if (dest.kind === "stdout") return options.writeStdout(options.content);
  if (dest.kind === "file") return writeFileAtomic(dest.path, options.content, { flag: "--output" });
  if (!options.client) throw new Error("a ConfigMap destination needs a cluster client");
  const cm = buildSnapshotConfigMap(dest.ref, options);
  const client = options.client;
  // Server-side apply is idempotent, so a dropped connection or a throttled answer is simply retried.
  const signal = options.signal;
  await retry(() => client.apply(cm, { fieldManager: "aicr", force: true, signal }), {
    attempts: APPLY_ATTEMPTS,
    retryable: isTransient,
    backoffMs: (attempt) => Math.min(APPLY_BACKOFF_MS * 2 ** (attempt - 1), APPLY_MAX_BACKOFF_MS),
    signal,
  });
}

const APPLY_ATTEMPTS = 4;
const APPLY_BACKOFF_MS = 250;
const APPLY_MAX_BACKOFF_MS = 4000;

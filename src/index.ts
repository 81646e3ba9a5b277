/**
 * The library surface: what the CLI is a thin layer over. Each collectSnapshot call is its own run
 * (run ID, invocation ID, objects, permissions, result and cleanup), so concurrent calls are safe.
 * Options are typed values with the CLI's defaults; flag strings stay in the CLI (src/commands/).
 *
 *   const client = KubeClient.connect({ env: process.env });
 *   const { document } = await collectSnapshot({ client, namespace: "aicr", timeoutMs: 120_000 });
 */

import { AicrError } from "./core/errors.ts";
import {
  type CollectSnapshotResult,
  type CollectSnapshotOptions as RunCollectSnapshotOptions,
  collectSnapshot as runCollectSnapshot,
} from "./remote/collect-snapshot.ts";

export { AicrError, type ErrorCode, EXIT_CODES } from "./core/errors.ts";
export { createLogger, type Logger } from "./core/log.ts";
export { KubeClient } from "./kube/client.ts";
export type { CollectSnapshotResult };

/**
 * A snapshot run's options. No invocation ID: it is the proof that this process wrote an object whose
 * create response was lost (cleanup and adoption trust it), so each call makes its own, never the caller.
 */
export type CollectSnapshotOptions = Omit<RunCollectSnapshotOptions, "invocationId">;

/**
 * Takes one node's snapshot through a run-isolated agent Job (remote/collect-snapshot.ts). An
 * `invocationId` passed anyway (past the type) is refused before any request.
 */
export async function collectSnapshot(options: CollectSnapshotOptions): Promise<CollectSnapshotResult> {
  if ((options as { invocationId?: unknown }).invocationId !== undefined)
    throw new AicrError("INVALID_REQUEST", "collectSnapshot does not take an invocationId", {
      remedy:
        "leave invocationId out: each call makes its own, the proof of which objects it created (runId may be given)",
      context: { field: "invocationId" },
    });
  const { invocationId: _ignored, ...run } = options as RunCollectSnapshotOptions;
  return runCollectSnapshot(run);
}
export { DEFAULT_TIMEOUT_MS, type SnapshotOptions } from "./remote/options.ts";
export type { ReceiptRow } from "./run/cleanup.ts";
export { generateRunId } from "./run/run-id.ts";
export type { KeptObject } from "./run/scope.ts";
export { parseSnapshot, type Snapshot } from "./snapshot/schema.ts";

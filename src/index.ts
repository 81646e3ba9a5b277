/**
 * The library surface: what the CLI is a thin layer over. Each collectSnapshot call is its own run
 * (run ID, invocation ID, objects, permissions, result and cleanup), so concurrent calls are safe.
 * Options are typed values with the CLI's defaults; flag strings stay in the CLI (src/commands/).
 *
 *   const client = KubeClient.connect({ env: process.env });
 *   const { document } = await collectSnapshot({ client, namespace: "aicr", timeoutMs: 120_000 });
 */

export { AicrError, type ErrorCode, EXIT_CODES } from "./core/errors.ts";
export { createLogger, type Logger } from "./core/log.ts";
export { KubeClient } from "./kube/client.ts";
export {
  type CollectSnapshotOptions,
  type CollectSnapshotResult,
  collectSnapshot,
} from "./remote/collect-snapshot.ts";
export { DEFAULT_TIMEOUT_MS, type SnapshotOptions } from "./remote/options.ts";
export type { ReceiptRow } from "./run/cleanup.ts";
export { generateRunId } from "./run/run-id.ts";
export type { KeptObject } from "./run/scope.ts";
export { parseSnapshot, type Snapshot } from "./snapshot/schema.ts";

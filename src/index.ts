/**
 * The library surface: what the CLI is a thin layer over. Each collectSnapshot call is its own run
 * (run ID, invocation ID, objects, permissions, result and cleanup), so concurrent calls are safe.
 */

export { resolveSnapshotOptions, type SnapshotFlags } from "./commands/_snapshot-flags.ts";
export { AicrError, type ErrorCode, EXIT_CODES } from "./core/errors.ts";
export { createLogger, type Logger } from "./core/log.ts";
export { KubeClient } from "./kube/client.ts";
export {
  type CollectSnapshotOptions,
  type CollectSnapshotResult,
  collectSnapshot,
} from "./remote/collect-snapshot.ts";
export type { SnapshotRunOptions } from "./remote/options.ts";
export type { ReceiptRow } from "./run/cleanup.ts";
export { generateRunId } from "./run/run-id.ts";
export { parseSnapshot, type Snapshot } from "./snapshot/schema.ts";

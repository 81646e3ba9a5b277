import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import { collectSnapshot } from "../remote/collect-snapshot.ts";
import { CAPTURE_JOB_PREFIX, type ValidateOptions } from "./options.ts";

/**
 * The live capture: the snapshot agent through the deployer, with this invocation's run ID and the
 * Job prefix aicr-validate, in the validation namespace. Returns the agent's YAML.
 */
export async function captureSnapshot(
  o: ValidateOptions,
  io: {
    client: KubeClient;
    log: Logger;
    signal: AbortSignal;
    runId: string;
    invocationId?: string;
    /** When the validation's --timeout began: the capture spends from the same time. */
    startedAt?: number;
  },
): Promise<string> {
  if (!o.capture) throw new AicrError("INTERNAL", "a live capture was asked for without its options");
  io.log.info(`capturing a live snapshot (Job ${CAPTURE_JOB_PREFIX}-${io.runId})`);
  const result = await collectSnapshot({
    ...o.capture,
    client: io.client,
    log: io.log,
    signal: io.signal,
    runId: io.runId,
    invocationId: io.invocationId,
    startedAt: io.startedAt,
  });
  return result.content;
}

import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import { collectSnapshot } from "../remote/collect-snapshot.ts";
import { resolveSnapshotOptions } from "../remote/options.ts";
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
    env: Readonly<Record<string, string | undefined>>;
  },
): Promise<string> {
  const options = resolveSnapshotOptions(
    {
      namespace: o.namespace,
      image: o.image,
      imagePullSecrets: [],
      jobName: CAPTURE_JOB_PREFIX,
      nodeSelectors: [],
      tolerations: [],
      timeout: `${o.timeoutMs}ms`,
      noCleanup: !o.cleanup,
    },
    io.env,
  );
  io.log.info(`capturing a live snapshot (Job ${CAPTURE_JOB_PREFIX}-${io.runId})`);
  const result = await collectSnapshot({
    ...options,
    client: io.client,
    log: io.log,
    signal: io.signal,
    runId: io.runId,
  });
  return result.content;
}

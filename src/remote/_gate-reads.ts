/**
 * Two read-only questions the gate of a run and of a fleet both ask before the first write: is the
 * run ID free, and would admission take the agent's pod (the dry run's object).
 */

import { AicrError } from "../core/errors.ts";
import type { buildAgentJob } from "../deployer/job-spec.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";

interface Ref {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/**
 * The run's names must be free: a reused --run-id whose objects still stand is refused here, before
 * anything is created, instead of half-way through the creates. Read-only, and sent with the gate.
 */
export async function runIdIsFree(client: KubeClient, refs: readonly Ref[], runId: string): Promise<void> {
  const found = await Promise.all(
    refs.map((ref) =>
      client.get(ref).then(
        (obj) => ({ ref, uid: obj.metadata?.uid }),
        () => undefined, // 404 is the expected answer; a refusal is the gate's to report
      ),
    ),
  );
  const taken = found.filter((f) => f !== undefined);
  if (taken.length === 0) return;
  throw new AicrError(
    "CONFLICT",
    `run ID ${runId} is already in use: ${taken.map((t) => `${t.ref.kind} ${t.ref.name} (uid ${t.uid})`).join(", ")} exists`,
    {
      remedy:
        "omit --run-id / AICR_RUN_ID so this run gets a fresh one, or remove the earlier run's objects (aicr runs delete <run-id>)",
      context: { field: "--run-id" },
    },
  );
}

/** The pod an agent Job would create, for the admission dry run (generateName: nothing is named yet). */
export function podOfJob(job: ReturnType<typeof buildAgentJob>, namespace: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      generateName: `${job.metadata.name}-`,
      namespace,
      labels: job.spec.template.metadata.labels,
    },
    spec: job.spec.template.spec,
  };
}

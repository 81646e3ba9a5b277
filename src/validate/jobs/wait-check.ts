import { ownedByJob } from "../../agent/pod-select.ts";
import { podFailure } from "../../agent/sentinel.ts";
import type { PodState } from "../../agent/wait.ts";
import type { AicrError } from "../../core/errors.ts";
import type { KubeClient } from "../../kube/client.ts";
import { watchUntil } from "../../kube/watch-until.ts";
import { VALIDATOR_LABEL } from "./objects.ts";

export interface Terminated {
  exitCode?: number;
  message?: string;
  reason?: string;
}

export type CheckPodOutcome =
  | { kind: "terminated"; pod: PodState; terminated: Terminated }
  /** The cluster already knows the pod cannot run (unschedulable, image pull, config error). */
  | { kind: "stuck"; pod: PodState; error: AicrError };

const terminatedOf = (pod: PodState): Terminated | undefined =>
  (pod.status?.containerStatuses?.[0]?.state as { terminated?: Terminated } | undefined)?.terminated;

/**
 * Waits for the pod of one check's Job — proven by its controller ownerReference to the Job's UID —
 * to end, or fails fast when the cluster says it never will.
 */
export function waitForCheckPod(
  client: KubeClient,
  o: {
    namespace: string;
    runId: string;
    check: string;
    jobUid: string;
    image: string;
    timeoutMs: number;
    signal: AbortSignal;
  },
): Promise<CheckPodOutcome> {
  let last: PodState | undefined;
  return watchUntil<PodState, CheckPodOutcome>({
    client,
    apiVersion: "v1",
    kind: "Pod",
    plural: "pods",
    list: {
      namespace: o.namespace,
      labelSelector: `aicr.run/run-id=${o.runId},${VALIDATOR_LABEL}=${o.check}`,
    },
    signal: o.signal,
    timeoutMs: o.timeoutMs,
    check(pod, type) {
      if (type === "DELETED" || !ownedByJob(pod, o.jobUid)) return undefined;
      last = pod;
      const terminated = terminatedOf(pod);
      if (terminated && (pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed"))
        return { kind: "terminated", pod, terminated };
      const error = podFailure(pod, { image: o.image, placement: { autoTargeted: false } });
      return error ? { kind: "stuck", pod, error } : undefined;
    },
    describeTimeout: () =>
      `check ${o.check} did not finish within ${Math.round(o.timeoutMs / 1000)}s (pod ${last?.metadata.name ?? "not seen"}, ${last?.status?.phase ?? "no phase"})`,
  });
}

import type { AicrError } from "../../core/errors.ts";
import { ownedByJob } from "../../deployer/pod-select.ts";
import { podFailure } from "../../deployer/sentinel.ts";
import { type PodState, terminatedOf } from "../../deployer/wait.ts";
import type { KubeClient } from "../../kube/client.ts";
import { watchUntil } from "../../kube/watch-until.ts";
import { VALIDATOR_LABEL } from "./_objects.ts";

export interface Terminated {
  exitCode?: number;
  message?: string;
  reason?: string;
}

export type CheckPodOutcome =
  | { kind: "terminated"; pod: PodState; terminated: Terminated }
  /** The cluster already knows the pod cannot run (unschedulable, image pull, config error). */
  | { kind: "stuck"; pod: PodState; error: AicrError };

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
    /** The check's deadline (core/deadline.ts). */
    signal: AbortSignal;
    /** Told of every pod of the check seen, so a timeout can say where the check stood. */
    seen?: (pod: PodState) => void;
  },
): Promise<CheckPodOutcome> {
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
    check(pod, type) {
      if (type === "DELETED" || !ownedByJob(pod, o.jobUid)) return undefined;
      o.seen?.(pod);
      const terminated = terminatedOf(pod);
      if (terminated && (pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed"))
        return { kind: "terminated", pod, terminated };
      const error = podFailure(pod, { image: o.image, placement: { autoTargeted: false } });
      return error ? { kind: "stuck", pod, error } : undefined;
    },
  });
}

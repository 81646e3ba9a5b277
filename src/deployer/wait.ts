import { AicrError } from "../core/errors.ts";
import type { KubeClient } from "../kube/client.ts";
import type { Json, V1Job, V1ObjectMeta, V1Pod } from "../kube/types.ts";
import { watchUntil } from "../kube/watch-until.ts";
import { runPodSelector } from "../run/labels.ts";
import { ownedByJob } from "./pod-select.ts";

export interface JobOutcome {
  succeeded: boolean;
  reason?: string | undefined;
  message?: string | undefined;
}

/** Where a wait starts and what it is checked against, when it is opened before the Job's create returns. */
interface JobBound {
  /** The Job's UID (read when events are checked: after `ready`). */
  uid: () => string;
  resourceVersion?: string | undefined;
  /** Settles when the Job's create has (see WatchUntilOptions.ready). */
  ready?: Promise<unknown> | undefined;
}

/** Waits for this run's Job (by name, and by the UID its create returned) to complete or fail. */
export function waitForJob(
  client: KubeClient,
  o: JobBound & {
    namespace: string;
    name: string;
    signal: AbortSignal;
  },
): Promise<JobOutcome> {
  return watchUntil<Json<V1Job>, JobOutcome>({
    client,
    resourceVersion: o.resourceVersion,
    ready: o.ready,
    apiVersion: "batch/v1",
    kind: "Job",
    plural: "jobs",
    list: { namespace: o.namespace, fieldSelector: `metadata.name=${o.name}` },
    signal: o.signal,
    check(job, type) {
      if (type === "DELETED" || job.metadata?.uid !== o.uid()) {
        throw new AicrError(
          "INTERNAL",
          `Job ${o.namespace}/${o.name} was deleted or replaced while the run waited for it`,
          {
            remedy: "another actor removed the run's Job; run again",
          },
        );
      }
      const cond = (t: string) => job.status?.conditions?.find((c) => c.type === t && c.status === "True");
      const done = cond("Complete") ?? cond("SuccessCriteriaMet");
      if (done) return { succeeded: true };
      const failed = cond("Failed") ?? cond("FailureTarget");
      if (failed) return { succeeded: false, reason: failed.reason, message: failed.message };
      return undefined;
    },
  });
}

/** A pod of the run as the API's JSON carries it; a listed or watched pod always has its name. */
export type PodState = Json<V1Pod> & { metadata: Json<V1ObjectMeta> & { name: string } };

/** Human text for a pod's last known state: where a run stood when its deadline passed. */
export function describePodState(pod: PodState | undefined): string {
  if (!pod) return "no pod of this run's Job was seen";
  const unscheduled = pod.status?.conditions?.find((c) => c.type === "PodScheduled" && c.status === "False");
  if (unscheduled)
    return `pod ${pod.metadata.name} is not scheduled: ${unscheduled.message ?? unscheduled.reason}`;
  const is = `pod ${pod.metadata.name} is ${pod.status?.phase ?? "Pending"}`;
  const state = pod.status?.containerStatuses?.[0]?.state;
  if (state?.waiting)
    return `${is}, container waiting: ${state.waiting.reason ?? "unknown reason"}${state.waiting.message ? ` (${state.waiting.message})` : ""}`;
  if (state?.running) return `${is}, container running`;
  if (state?.terminated)
    return `${is}, container terminated: ${state.terminated.reason ?? "exit code"} ${state.terminated.exitCode}`;
  return is;
}

/**
 * Waits for a pod owned by this run's Job whose container has started (so its log can be read).
 * Candidates are narrowed by the run labels, then authorized by the controller ownerReference.
 */
export function waitForStartedPod(
  client: KubeClient,
  o: JobBound & {
    namespace: string;
    runId: string;
    signal: AbortSignal;
    onPending?: (pod: PodState) => void;
  },
): Promise<PodState> {
  return watchUntil<PodState, PodState>({
    client,
    resourceVersion: o.resourceVersion,
    ready: o.ready,
    apiVersion: "v1",
    kind: "Pod",
    plural: "pods",
    list: { namespace: o.namespace, labelSelector: runPodSelector(o.runId) },
    signal: o.signal,
    check(pod, type) {
      if (type === "DELETED" || !ownedByJob(pod, o.uid()) || pod.metadata.deletionTimestamp) return undefined;
      const state = pod.status?.containerStatuses?.[0]?.state;
      if (
        state?.running ||
        state?.terminated ||
        pod.status?.phase === "Succeeded" ||
        pod.status?.phase === "Failed"
      )
        return pod;
      o.onPending?.(pod);
      return undefined;
    },
  });
}

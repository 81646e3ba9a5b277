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
      return jobOutcomeOf(job);
    },
  });
}

/** A Job's end as its conditions say (the success or failure targets count: the end is decided). */
export function jobOutcomeOf(job: Json<V1Job>): JobOutcome | undefined {
  const cond = (t: string) => job.status?.conditions?.find((c) => c.type === t && c.status === "True");
  if (cond("Complete") ?? cond("SuccessCriteriaMet")) return { succeeded: true };
  const failed = cond("Failed") ?? cond("FailureTarget");
  if (failed) return { succeeded: false, reason: failed.reason, message: failed.message };
  return undefined;
}

/** A pod of the run as the API's JSON carries it; a listed or watched pod always has its name. */
export type PodState = Json<V1Pod> & { metadata: Json<V1ObjectMeta> & { name: string } };

type Terminated = { exitCode?: number; message?: string; reason?: string };

/** The agent container's terminated state, if its pod has one. */
export const terminatedOf = (pod: PodState | undefined): Terminated | undefined =>
  (pod?.status?.containerStatuses?.[0]?.state as { terminated?: Terminated } | undefined)?.terminated;

/** The agent container's end, as the pod reports it (deployer/run-end.ts). */
export type AgentExit = { pod: PodState; exitCode: number; reason?: string; message?: string };

/** A pod event that ends the agent: this Job's pod (controller reference), its container terminated. */
export function agentExitOf(pod: PodState, jobUid: string): AgentExit | undefined {
  if (!ownedByJob(pod, jobUid)) return undefined;
  const term = terminatedOf(pod);
  if (term?.exitCode === undefined) return undefined;
  return { pod, exitCode: term.exitCode, reason: term.reason, message: term.message };
}

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
 * One watch of the run's pods for two facts: the Job's pod started (its log can be read), and its
 * agent container's end (run-end.ts). Candidates are narrowed by the run labels, then authorized by
 * the controller ownerReference. A pending pod is told to `onPending` (fail-fast causes).
 */
export function watchRunPods(
  client: KubeClient,
  o: JobBound & {
    namespace: string;
    runId: string;
    signal: AbortSignal;
    onPending?: (pod: PodState) => void;
  },
): { started: Promise<PodState>; exit: Promise<AgentExit> } {
  const started = Promise.withResolvers<PodState>();
  const exit = watchUntil<PodState, AgentExit>({
    client,
    resourceVersion: o.resourceVersion,
    ready: o.ready,
    apiVersion: "v1",
    kind: "Pod",
    plural: "pods",
    list: { namespace: o.namespace, labelSelector: runPodSelector(o.runId) },
    signal: o.signal,
    check(pod, type) {
      // A pod's end counts however it is reported (its deletion's last state included).
      const ended = agentExitOf(pod, o.uid());
      if (ended) {
        started.resolve(pod);
        return ended;
      }
      if (type === "DELETED" || !ownedByJob(pod, o.uid()) || pod.metadata.deletionTimestamp) return undefined;
      const phase = pod.status?.phase;
      // A pod that ended without a container status (rejected by its kubelet) has a log to read too.
      if (pod.status?.containerStatuses?.[0]?.state?.running || phase === "Succeeded" || phase === "Failed")
        started.resolve(pod);
      else o.onPending?.(pod);
      return undefined;
    },
  });
  exit.catch(started.reject);
  return { started: started.promise, exit };
}

/** A pod owned by this run's Job whose container has started (watchRunPods' first fact). */
export function waitForStartedPod(
  client: KubeClient,
  o: Parameters<typeof watchRunPods>[1],
): Promise<PodState> {
  return watchRunPods(client, o).started;
}

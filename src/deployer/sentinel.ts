import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import type { CoreV1Event, Json } from "../kube/types.ts";
import { watchUntil } from "../kube/watch-until.ts";
import type { PodState } from "./wait.ts";

export interface Placement {
  nodeSelector?: Record<string, string> | undefined;
  tolerations?: unknown[] | undefined;
  autoTargeted: boolean;
}

const PULL_FAILURES = new Set(["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"]);

/** A cause the cluster already knows will keep the run from ever succeeding, or undefined. */
export function podFailure(pod: PodState, o: { image: string; placement: Placement }): AicrError | undefined {
  const waiting = pod.status?.containerStatuses?.[0]?.state?.waiting;
  if (waiting?.reason && PULL_FAILURES.has(waiting.reason)) {
    return new AicrError(
      "NOT_FOUND",
      `the agent image ${JSON.stringify(o.image)} cannot be pulled: ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ""}`,
      {
        remedy:
          "check --image (or AICR_IMAGE); for a private registry pass --image-pull-secret <secret in the namespace>",
        context: { pod: pod.metadata.name, reason: waiting.reason },
      },
    );
  }
  if (waiting?.reason === "CreateContainerConfigError") {
    return new AicrError(
      "INTERNAL",
      `the agent container cannot be created: ${waiting.message ?? waiting.reason}`,
      {
        remedy:
          "check the pod's events (kubectl describe pod) for the missing Secret, ConfigMap or setting it names",
        context: { pod: pod.metadata.name },
      },
    );
  }
  const unscheduled = pod.status?.conditions?.find(
    (c) => c.type === "PodScheduled" && c.status === "False" && c.reason === "Unschedulable",
  );
  if (unscheduled) {
    const selector = o.placement.nodeSelector ? JSON.stringify(o.placement.nodeSelector) : "none";
    const tolerations = o.placement.tolerations
      ? JSON.stringify(o.placement.tolerations)
      : "every taint (default)";
    return new AicrError(
      "NOT_FOUND",
      `no node can run the agent pod: ${unscheduled.message ?? "Unschedulable"}`,
      {
        remedy: `node selector ${selector}${o.placement.autoTargeted ? " (injected by GPU auto-targeting)" : ""}, tolerations ${tolerations}: adjust --node-selector / --toleration, or free capacity on a matching node`,
        context: { pod: pod.metadata.name },
      },
    );
  }
  return undefined;
}

/** A FailedCreate on our Job is admission refusing the pod; a missing ServiceAccount is retried by the Job controller. */
export function jobEventFailure(event: Json<CoreV1Event>, jobUid: string): AicrError | undefined {
  if (event.involvedObject?.uid !== jobUid || event.reason !== "FailedCreate") return undefined;
  const message = event.message ?? "";
  if (/service ?account/i.test(message) && /not found/i.test(message)) return undefined;
  return new AicrError("UNAUTHORIZED", `the Job could not create the agent pod: ${message}`, {
    remedy:
      "the namespace's Pod Security level or an admission webhook rejects the agent pod: run with --privileged=false in a restricted namespace, or choose a namespace that admits privileged pods",
  });
}

/**
 * Watches the run's Job's events while the run waits, and aborts the run with the first fatal cause:
 * the operator hears it within seconds, not at the timeout. Started only when the Job has shown no
 * pod for a second (see collect-snapshot.ts): a Job with a pod needs no FailedCreate watch. (The pod's own causes, podFailure, are
 * checked on the run's pod watch as it reports pending pods: one watch of the run's pods, not two.)
 */
export function startSentinel(
  client: KubeClient,
  o: {
    namespace: string;
    jobUid: string;
    /** The run's deadline (the sentinel ends with it, or when stopped). */
    signal: AbortSignal;
    log: Logger;
    onFailure: (err: AicrError) => void;
  },
): { stop: () => void } {
  const stop = new AbortController();
  const signal = AbortSignal.any([o.signal, stop.signal]);
  const report = (err: AicrError) => {
    if (!stop.signal.aborted) o.onFailure(err);
  };
  const events = watchUntil<Json<CoreV1Event>, AicrError>({
    client,
    signal,
    apiVersion: "v1",
    kind: "Event",
    plural: "events",
    // Only this Job's events: a namespace-wide watch per run would grow as runs² with concurrent runs.
    list: { namespace: o.namespace, fieldSelector: `involvedObject.uid=${o.jobUid}` },
    check: (event) => jobEventFailure(event, o.jobUid),
  });
  events.then(report, (err: unknown) => {
    if (!stop.signal.aborted) o.log.debug("fail-fast watch ended", { cause: (err as Error).message });
  });
  return { stop: () => stop.abort() };
}

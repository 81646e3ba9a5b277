import { DeadlineExceeded, startDeadline } from "../core/deadline.ts";
import { AicrError } from "../core/errors.ts";
import { agentJobFailure } from "../deployer/failure.ts";
import type { NodeJob } from "../deployer/fleet-deployer.ts";
import type { FleetDispatcher } from "../deployer/fleet-dispatch.ts";
import type { ResultConfigMap } from "../deployer/result.ts";
import { awaitRunEnd, type RunEnd } from "../deployer/run-end.ts";
import { type Placement, podFailure } from "../deployer/sentinel.ts";
import {
  type AgentExit,
  agentExitOf,
  describePodState,
  type JobOutcome,
  jobOutcomeOf,
  type PodState,
} from "../deployer/wait.ts";
import type { Snapshot } from "../snapshot/schema.ts";

export interface NodeEndOptions {
  runId: string;
  namespace: string;
  nodeTimeoutMs?: number | undefined;
  image: string;
  placement: Placement;
  signal: AbortSignal;
  /** A quorum read of the node's staging ConfigMap. */
  read: () => Promise<ResultConfigMap>;
  /** The document in it, and its bytes. */
  parse: (cm: ResultConfigMap) => { document: Snapshot; content: string };
}

/**
 * One node's end (deployer/run-end.ts): its pod's agent exited 0 and the staging ConfigMap, read
 * then, names that pod — or, for an agent that names none, the Job's condition. Rejects with the
 * node's own cause: a pending pod the cluster already knows cannot run (unschedulable, image pull:
 * sentinel.ts's podFailure), the agent failing (its exit code and termination message), the Job
 * failing or deleted, --node-timeout from its create, or the run's deadline (cancel, --timeout) —
 * each TIMEOUT saying where the node's pod stood. Pod and Job events come from the run-wide watches
 * through the dispatcher; the only request is the read of the result.
 */
export async function awaitNodeEnd(
  dispatcher: FleetDispatcher,
  job: NodeJob,
  o: NodeEndOptions,
): Promise<Extract<RunEnd, { ok: true }>> {
  using deadline = o.nodeTimeoutMs
    ? startDeadline(o.signal, o.nodeTimeoutMs, {
        what: `the agent on node ${job.node} did not finish`,
        flag: "--node-timeout",
        remedy: "raise --node-timeout if the node is just slow, or read its pod's log",
      })
    : undefined;
  const signal = deadline?.signal ?? o.signal;
  const exit = Promise.withResolvers<AgentExit>();
  const completion = Promise.withResolvers<JobOutcome>();
  const stuck = Promise.withResolvers<never>();
  for (const p of [exit.promise, completion.promise, stuck.promise]) p.catch(() => {});
  let lastPod: PodState | undefined;
  const onAbort = () => stuck.reject(signal.reason);
  if (signal.aborted) onAbort();
  signal.addEventListener("abort", onAbort, { once: true });
  dispatcher.register(job.uid, {
    pod(pod, type) {
      const ended = agentExitOf(pod, job.uid);
      if (ended) {
        lastPod = pod;
        return exit.resolve(ended);
      }
      if (type === "DELETED" || pod.metadata.deletionTimestamp) return;
      lastPod = pod;
      if (pod.status?.containerStatuses?.[0]?.state?.running) return;
      const cause = podFailure(pod, { image: o.image, placement: o.placement });
      if (cause) stuck.reject(cause);
    },
    job(state, type) {
      if (type === "DELETED")
        return completion.reject(
          new AicrError("INTERNAL", `Job ${job.job} was deleted while the run waited for it`, {
            remedy: "another actor removed the run's Job; run again",
          }),
        );
      const outcome = jobOutcomeOf(state);
      if (outcome) completion.resolve(outcome);
    },
  });
  const ending = awaitRunEnd({
    run: () => ({ runId: o.runId, jobUid: job.uid }),
    exit: exit.promise,
    completion: completion.promise,
    writes: () => [],
    read: o.read,
    parse: o.parse,
    output: `${o.namespace}/${job.staging}`,
  });
  ending.catch(() => {}); // a node that ended otherwise (stuck, its deadline) leaves it unanswered
  try {
    const end = await Promise.race([stuck.promise, ending]);
    if (end.ok) return end;
    throw agentJobFailure(end.condition, end.pod ?? lastPod, {
      remedy:
        "read the agent's log: kubectl logs -n <namespace> job/<job> (rerun with --no-cleanup to keep it)",
    });
  } catch (err) {
    // A deadline's TIMEOUT (the node's or the run's) says where this node's pod stood.
    if (err instanceof DeadlineExceeded) {
      const state = describePodState(lastPod);
      throw err.at(o.signal.aborted ? `node ${job.node}: ${state}` : state);
    }
    throw err;
  } finally {
    signal.removeEventListener("abort", onAbort);
    dispatcher.unregister(job.uid);
  }
}

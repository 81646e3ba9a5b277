import { DeadlineExceeded, startDeadline } from "../core/deadline.ts";
import { AicrError } from "../core/errors.ts";
import { agentJobFailure } from "../deployer/failure.ts";
import type { NodeJob } from "../deployer/fleet-deployer.ts";
import type { FleetDispatcher } from "../deployer/fleet-dispatch.ts";
import { type Placement, podFailure } from "../deployer/sentinel.ts";
import { describePodState, type PodState } from "../deployer/wait.ts";

/**
 * Resolves when `job`'s agent Job completes; rejects with the node's own cause: a pending pod the
 * cluster already knows cannot run (unschedulable, image pull: sentinel.ts's podFailure), the Job
 * failing (its pod's exit code and termination message), the Job deleted, --node-timeout from its
 * create, or the run's deadline (cancel, --timeout) — each TIMEOUT saying where the node's pod stood.
 * Events come from the run-wide watches through the dispatcher; no request here.
 */
export async function waitNodeJob(
  dispatcher: FleetDispatcher,
  job: NodeJob,
  o: { nodeTimeoutMs?: number | undefined; image: string; placement: Placement; signal: AbortSignal },
): Promise<void> {
  using deadline = o.nodeTimeoutMs
    ? startDeadline(o.signal, o.nodeTimeoutMs, {
        what: `the agent on node ${job.node} did not finish`,
        flag: "--node-timeout",
        remedy: "raise --node-timeout if the node is just slow, or read its pod's log",
      })
    : undefined;
  const signal = deadline?.signal ?? o.signal;
  const { promise, resolve, reject } = Promise.withResolvers<void>();
  let lastPod: PodState | undefined;
  const onAbort = () => reject(signal.reason);
  if (signal.aborted) onAbort();
  signal.addEventListener("abort", onAbort, { once: true });
  dispatcher.register(job.uid, {
    pod(pod, type) {
      if (type === "DELETED" || pod.metadata.deletionTimestamp) return;
      lastPod = pod;
      const state = pod.status?.containerStatuses?.[0]?.state;
      if (state?.running || state?.terminated) return;
      const cause = podFailure(pod, { image: o.image, placement: o.placement });
      if (cause) reject(cause);
    },
    job(state, type) {
      if (type === "DELETED")
        return reject(
          new AicrError("INTERNAL", `Job ${job.job} was deleted while the run waited for it`, {
            remedy: "another actor removed the run's Job; run again",
          }),
        );
      const cond = (t: string) => state.status?.conditions?.find((c) => c.type === t && c.status === "True");
      if (cond("Complete") ?? cond("SuccessCriteriaMet")) return resolve();
      const failed = cond("Failed") ?? cond("FailureTarget");
      if (!failed) return;
      reject(
        agentJobFailure(failed, lastPod, {
          remedy:
            "read the agent's log: kubectl logs -n <namespace> job/<job> (rerun with --no-cleanup to keep it)",
        }),
      );
    },
  });
  try {
    await promise;
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

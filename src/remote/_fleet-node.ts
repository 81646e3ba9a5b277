import type { NodeJob } from "../agent/fleet-deployer.ts";
import type { FleetDispatcher } from "../agent/fleet-dispatch.ts";
import { type Placement, podFailure } from "../agent/sentinel.ts";
import { describePodState, type PodState } from "../agent/wait.ts";
import { AicrError } from "../core/errors.ts";
import { formatSpan } from "./_progress.ts";

type Terminated = { exitCode?: number; message?: string; reason?: string };

const terminatedOf = (pod: PodState | undefined): Terminated | undefined =>
  (pod?.status?.containerStatuses?.[0]?.state as { terminated?: Terminated } | undefined)?.terminated;

/**
 * Resolves when `job`'s agent Job completes; rejects with the node's own cause: a pending pod the
 * cluster already knows cannot run (unschedulable, image pull: sentinel.ts's podFailure), the Job
 * failing (its pod's exit code and termination message), the Job deleted, --timeout from its create,
 * or the run's cancel. Events come from the run-wide watches through the dispatcher; no request here.
 */
export function waitNodeJob(
  dispatcher: FleetDispatcher,
  job: NodeJob,
  o: { timeoutMs: number; image: string; placement: Placement; signal: AbortSignal },
): Promise<void> {
  const { promise, resolve, reject } = Promise.withResolvers<void>();
  let lastPod: PodState | undefined;
  const timer = setTimeout(
    () =>
      reject(
        new AicrError(
          "TIMEOUT",
          `the agent on node ${job.node} did not finish within ${formatSpan(o.timeoutMs)} (--timeout): ${describePodState(lastPod)}`,
          { remedy: "raise --timeout if the node is just slow, or read its pod's log" },
        ),
      ),
    o.timeoutMs,
  );
  const onAbort = () => reject(o.signal.reason);
  if (o.signal.aborted) onAbort();
  o.signal.addEventListener("abort", onAbort, { once: true });
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
      const term = terminatedOf(lastPod);
      const why = term?.message?.trim() || failed.message || failed.reason || "the agent failed";
      reject(
        new AicrError(
          failed.reason === "DeadlineExceeded" ? "TIMEOUT" : "INTERNAL",
          `the agent Job failed (${failed.reason ?? "Failed"}${term?.exitCode !== undefined ? `, exit code ${term.exitCode}` : ""}): ${why}`,
          {
            remedy:
              "read the agent's log: kubectl logs -n <namespace> job/<job> (rerun with --no-cleanup to keep it)",
          },
        ),
      );
    },
  });
  return promise.finally(() => {
    clearTimeout(timer);
    o.signal.removeEventListener("abort", onAbort);
    dispatcher.unregister(job.uid);
  });
}

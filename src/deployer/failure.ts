import { timedOut } from "../core/deadline.ts";
import { AicrError } from "../core/errors.ts";
import { type PodState, terminatedOf } from "./wait.ts";

/**
 * An agent Job that failed, one node's or one run's alike: the Job's reason, the container's exit code,
 * the termination message the agent wrote (else the Job's own message), and any log tail. A Job the
 * cluster stopped at its activeDeadlineSeconds is a TIMEOUT; any other failure is INTERNAL.
 */
export function agentJobFailure(
  condition: { reason?: string | undefined; message?: string | undefined },
  pod: PodState | undefined,
  o: { remedy: string; logTail?: readonly string[] | undefined },
): AicrError {
  const term = terminatedOf(pod);
  const why = term?.message?.trim() || condition.message || condition.reason || "the agent failed";
  const lines = o.logTail ?? [];
  const tail =
    lines.length > 0
      ? `\n--- last ${lines.length} agent log lines ---\n${lines.join("\n")}\n--- end of agent log ---`
      : "";
  const message = `the agent Job failed (${condition.reason ?? "Failed"}${term?.exitCode !== undefined ? `, exit code ${term.exitCode}` : ""}): ${why}${tail}`;
  return condition.reason === "DeadlineExceeded"
    ? timedOut(message, { remedy: o.remedy })
    : new AicrError("INTERNAL", message, { remedy: o.remedy });
}

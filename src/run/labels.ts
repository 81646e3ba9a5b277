import { LABEL, LABEL_VALUE } from "../core/labels.ts";

export interface RunIdentity {
  runId: string;
  invocationId: string;
}

/**
 * The five labels on every object a run creates and on the pod template. The run ID says
 * which run; only the invocation ID proves "this process created it" (never select on it).
 */
export function runLabels(
  id: RunIdentity,
  component: string = LABEL_VALUE.snapshotAgent,
): Record<string, string> {
  return {
    [LABEL.name]: LABEL_VALUE.app,
    [LABEL.managedBy]: LABEL_VALUE.app,
    [LABEL.component]: component,
    [LABEL.runId]: id.runId,
    [LABEL.invocationId]: id.invocationId,
  };
}

/** Narrows candidates only: labels are writable by anyone who can update pods, so they never authorize. */
export function runPodSelector(runId: string): string {
  return `${LABEL.name}=${LABEL_VALUE.app},${LABEL.runId}=${runId}`;
}

/**
 * Proof of authorship: the app, managed-by, run-ID and invocation-ID labels of this invocation, with
 * non-empty IDs. The component label is left out on purpose: it says which kind of run object it is
 * (snapshot-agent, validation), not who made it.
 */
export function carriesInvocationLabels(
  labels: Record<string, string> | undefined,
  id: RunIdentity,
): boolean {
  if (!labels || id.runId === "" || id.invocationId === "") return false;
  const want = runLabels(id);
  return [LABEL.name, LABEL.managedBy, LABEL.runId, LABEL.invocationId].every((k) => labels[k] === want[k]);
}

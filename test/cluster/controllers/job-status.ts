/** The Job's terminal decisions and condition texts, as the real job controller words them. */
import type { KObject } from "../store.ts";
import { type Condition, getCondition, setCondition } from "./k8s.ts";

export interface Verdict {
  kind: "success" | "failure";
  reason: string;
  message: string;
}

export const COMPLETIONS_REACHED: Verdict = {
  kind: "success",
  reason: "CompletionsReached",
  message: "Reached expected number of succeeded pods",
};
export const BACKOFF_LIMIT: Verdict = {
  kind: "failure",
  reason: "BackoffLimitExceeded",
  message: "Job has reached the specified backoff limit",
};
export const DEADLINE: Verdict = {
  kind: "failure",
  reason: "DeadlineExceeded",
  message: "Job was active longer than specified deadline",
};

/** The interim condition (SuccessCriteriaMet / FailureTarget) already recorded on the Job, if any. */
export function pendingVerdict(job: KObject): Verdict | undefined {
  for (const [type, kind] of [
    ["SuccessCriteriaMet", "success"],
    ["FailureTarget", "failure"],
  ] as const) {
    const c = getCondition(job, type);
    if (c?.status === "True") return { kind, reason: c.reason ?? "", message: c.message ?? "" };
  }
  return undefined;
}

export function newVerdict(
  job: KObject,
  counts: { succeeded: number; failed: number },
  now: Date,
): Verdict | undefined {
  const spec = job.spec ?? {};
  if (counts.succeeded >= (spec.completions ?? 1)) return COMPLETIONS_REACHED;
  if (counts.failed > (spec.backoffLimit ?? 6)) return BACKOFF_LIMIT;
  const start = job.status?.startTime;
  if (spec.activeDeadlineSeconds != null && start && !spec.suspend) {
    if (now.getTime() - Date.parse(start) >= spec.activeDeadlineSeconds * 1000) return DEADLINE;
  }
  return undefined;
}

/** Milliseconds until activeDeadlineSeconds passes, for a requeue. */
export function deadlineIn(job: KObject, now: Date): number | undefined {
  const secs = job.spec?.activeDeadlineSeconds;
  const start = job.status?.startTime;
  if (secs == null || !start || job.spec?.suspend) return undefined;
  return Date.parse(start) + secs * 1000 - now.getTime();
}

const interimType = (v: Verdict) => (v.kind === "success" ? "SuccessCriteriaMet" : "FailureTarget");
const finalType = (v: Verdict) => (v.kind === "success" ? "Complete" : "Failed");

function condition(type: string, v: Verdict): Condition {
  return { type, status: "True", reason: v.reason, message: v.message, lastProbeTime: undefined };
}

export function withInterim(conditions: Condition[], v: Verdict, now: string): Condition[] {
  const c = condition(interimType(v), v);
  c.lastProbeTime = now;
  return setCondition(conditions, c, now);
}

export function withFinal(conditions: Condition[], v: Verdict, now: string): Condition[] {
  const c = condition(finalType(v), v);
  c.lastProbeTime = now;
  return setCondition(conditions, c, now);
}

/** When the Job finished: the transition time of its Complete or Failed condition. */
export function finishedAt(job: KObject): number | undefined {
  for (const type of ["Complete", "Failed"]) {
    const c = getCondition(job, type);
    if (c?.status === "True" && c.lastTransitionTime) return Date.parse(c.lastTransitionTime);
  }
  return undefined;
}

export function suspendedCond(
  status: "True" | "False",
  reason: string,
  message: string,
  now: string,
): Condition {
  return { type: "Suspended", status, reason, message, lastProbeTime: now };
}

/** active/succeeded/failed are omitempty int32s: absent when zero. */
export function setCount(status: Record<string, unknown>, field: string, n: number): void {
  if (n > 0) status[field] = n;
  else delete status[field];
}

/** Pure: the objects read by label, grouped into runs (age, command, Job state, live pod, anchors). */
import { LABEL } from "../core/labels.ts";
import { RUN_ID_PATTERN } from "../run/run-id.ts";
import { anchorNames, RUN_KINDS } from "./_kinds.ts";
import type { RunJobState, RunObject, RunView } from "./types.ts";

/** An object as a list returns it: only the fields this module reads. */
export interface Listed {
  apiVersion: string;
  kind: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    ownerReferences?: { uid?: string }[];
  };
  status?: {
    phase?: string;
    active?: number;
    conditions?: { type?: string; status?: string }[];
  };
  subjects?: { kind?: string; namespace?: string }[];
}

/** `YYYYMMDD-HHMMSS-…` → its UTC time, or undefined for another shape. */
export function runIdTime(runId: string): string | undefined {
  if (!RUN_ID_PATTERN.test(runId)) return undefined;
  const [d = "", t = ""] = runId.split("-");
  const iso = `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}T${t.slice(0, 2)}:${t.slice(2, 4)}:${t.slice(4, 6)}Z`;
  return Number.isNaN(Date.parse(iso)) ? undefined : new Date(iso).toISOString();
}

const trueCondition = (o: Listed, ...types: string[]): boolean =>
  (o.status?.conditions ?? []).some((c) => c.status === "True" && types.includes(c.type ?? ""));

/** One Job: failed or complete by its conditions, else still active. */
export function jobStateOf(job: Listed): Exclude<RunJobState, "none"> {
  if (trueCondition(job, "Failed", "FailureTarget")) return "failed";
  if (trueCondition(job, "Complete", "SuccessCriteriaMet")) return "complete";
  return "active";
}

/** A run's Jobs together: any active → active; else any failed → failed; else complete; none → none. */
export function combinedJobState(jobs: Listed[]): RunJobState {
  const states = jobs.map(jobStateOf);
  if (states.length === 0) return "none";
  if (states.includes("active")) return "active";
  return states.includes("failed") ? "failed" : "complete";
}

const isLivePod = (p: Listed): boolean => p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed";

const COMMANDS: Record<string, RunView["command"]> = { validation: "validate", "snapshot-agent": "snapshot" };

function commandOf(objects: Listed[]): RunView["command"] {
  const components = new Set(objects.map((o) => o.metadata?.labels?.[LABEL.component] ?? ""));
  // validate's own capture is a snapshot agent under the same run ID: a validator object decides.
  if (components.has("validation")) return "validate";
  for (const c of components) if (COMMANDS[c]) return COMMANDS[c];
  return "unknown";
}

function namespaceOf(objects: Listed[]): string | undefined {
  const namespaced = objects.find((o) => o.metadata?.namespace);
  if (namespaced) return namespaced.metadata?.namespace;
  for (const o of objects)
    for (const s of o.subjects ?? []) if (s.kind === "ServiceAccount" && s.namespace) return s.namespace;
  return undefined;
}

const toRunObject = (o: Listed): RunObject => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}),
  name: o.metadata?.name ?? "",
  uid: o.metadata?.uid ?? "",
  owners: (o.metadata?.ownerReferences ?? []).map((r) => r.uid ?? "").filter(Boolean),
  created: o.metadata?.creationTimestamp,
});

/** Listed in the order a run creates them (RUN_KINDS). */
const KIND_ORDER = RUN_KINDS.map((k) => k.kind);
const byKindThenName = (a: RunObject, b: RunObject): number =>
  KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) ||
  (a.namespace ?? "").localeCompare(b.namespace ?? "") ||
  a.name.localeCompare(b.name);

/** One run from its objects (all carry its run-ID label). */
export function runViewOf(runId: string, objects: Listed[]): RunView {
  const anchors = new Set(anchorNames(runId));
  const created =
    runIdTime(runId) ??
    objects
      .map((o) => o.metadata?.creationTimestamp)
      .filter((t): t is string => Boolean(t))
      .sort()[0];
  return {
    runId,
    ...(created ? { created } : {}),
    command: commandOf(objects),
    namespace: namespaceOf(objects),
    job: combinedJobState(objects.filter((o) => o.kind === "Job")),
    podLive: objects.some((o) => o.kind === "Pod" && isLivePod(o)),
    anchors: objects
      .filter((o) => o.kind === "ClusterRole" && anchors.has(o.metadata?.name ?? ""))
      .map((o) => o.metadata?.name ?? ""),
    objects: objects.map(toRunObject).sort(byKindThenName),
  };
}

/** Every object grouped by its run-ID label; runs oldest first. */
export function groupRuns(objects: Listed[]): RunView[] {
  const groups = new Map<string, Listed[]>();
  for (const o of objects) {
    const id = o.metadata?.labels?.[LABEL.runId];
    if (!id) continue;
    groups.set(id, [...(groups.get(id) ?? []), o]);
  }
  return [...groups].map(([id, list]) => runViewOf(id, list)).sort((a, b) => a.runId.localeCompare(b.runId));
}

/** `3d4h`, `2h5m`, `4m10s`, `12s`: the largest two units. */
export function ageText(created: string | undefined, now: Date): string {
  if (!created) return "?";
  let s = Math.max(0, Math.floor((now.getTime() - Date.parse(created)) / 1000));
  const parts: [number, string][] = [];
  for (const [unit, n] of [
    ["d", 86400],
    ["h", 3600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    parts.push([Math.floor(s / n), unit]);
    s %= n;
  }
  const first = parts.findIndex(([v]) => v > 0);
  if (first < 0) return "0s";
  return parts
    .slice(first, first + 2)
    .filter(([v]) => v > 0)
    .map(([v, u]) => `${v}${u}`)
    .join("");
}

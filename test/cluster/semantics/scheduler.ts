/** Scheduling decisions with the default plugins' filter order and the real FitError message. */
import { parseQuantity } from "./quantity.ts";

type Json = any;

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}
export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

export interface ScheduleContext {
  runtimeClasses: Json[];
  /** Pods already bound, by node name (terminated pods are ignored). */
  podsOnNodes: Record<string, Json[]>;
}

export type ScheduleResult = { nodeName: string } | { unschedulable: string };

export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  if (t.operator === "Exists") return true;
  if (!t.operator || t.operator === "Equal") return (t.value ?? "") === (taint.value ?? "");
  return false;
}

function matchExpression(labels: Record<string, string>, e: Json): boolean {
  const has = Object.hasOwn(labels, e.key);
  const v = labels[e.key];
  const values: string[] = e.values ?? [];
  switch (e.operator) {
    case "In":
      return has && values.includes(v!);
    case "NotIn":
      return !has || !values.includes(v!);
    case "Exists":
      return has;
    case "DoesNotExist":
      return !has;
    case "Gt":
    case "Lt": {
      if (!has || !/^-?\d+$/.test(v!) || values.length !== 1) return false;
      return e.operator === "Gt" ? Number(v) > Number(values[0]) : Number(v) < Number(values[0]);
    }
    default:
      return false;
  }
}

function matchesTerm(node: Json, term: Json): boolean {
  const exprs: Json[] = term.matchExpressions ?? [];
  const fields: Json[] = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const labels = node.metadata?.labels ?? {};
  return (
    exprs.every((e) => matchExpression(labels, e)) &&
    fields.every((f) => matchExpression({ "metadata.name": node.metadata?.name }, f))
  );
}

export function matchesNodeSelectorAndAffinity(
  pod: Json,
  node: Json,
  extraSelector: Record<string, string> = {},
): boolean {
  const labels = node.metadata?.labels ?? {};
  const selector = { ...extraSelector, ...(pod.spec?.nodeSelector ?? {}) };
  if (!Object.entries(selector).every(([k, v]) => labels[k] === v)) return false;
  const terms: Json[] | undefined =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  return terms === undefined || terms.some((t) => matchesTerm(node, t));
}

/** Requests: the larger of the containers' sum and any single init container (no sidecars, no overhead). */
export function podRequests(pod: Json): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const c of pod.spec?.containers ?? []) {
    for (const [r, q] of Object.entries(c.resources?.requests ?? c.resources?.limits ?? {})) {
      sum[r] = (sum[r] ?? 0) + parseQuantity(q as string);
    }
  }
  for (const c of pod.spec?.initContainers ?? []) {
    for (const [r, q] of Object.entries(c.resources?.requests ?? c.resources?.limits ?? {})) {
      sum[r] = Math.max(sum[r] ?? 0, parseQuantity(q as string));
    }
  }
  return sum;
}

const isActive = (p: Json): boolean => p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed";

/** The reasons a node rejects the pod, from the first failing filter (as the framework stops there). */
function filterNode(pod: Json, node: Json, ctx: ScheduleContext, rc: Json | undefined): string[] {
  const tolerations: Toleration[] = [
    ...(pod.spec?.tolerations ?? []),
    ...(rc?.scheduling?.tolerations ?? []),
  ];
  if (node.spec?.unschedulable) {
    const t = { key: "node.kubernetes.io/unschedulable", effect: "NoSchedule" };
    if (!tolerations.some((x) => toleratesTaint(x, t))) return ["node(s) were unschedulable"];
  }
  const taints: Taint[] = node.spec?.taints ?? [];
  const untolerated = taints.find(
    (t) =>
      (t.effect === "NoSchedule" || t.effect === "NoExecute") &&
      !tolerations.some((x) => toleratesTaint(x, t)),
  );
  if (untolerated) return [`node(s) had untolerated taint {${untolerated.key}: ${untolerated.value ?? ""}}`];
  if (!matchesNodeSelectorAndAffinity(pod, node, rc?.scheduling?.nodeSelector)) {
    return ["node(s) didn't match Pod's node affinity/selector"];
  }
  const others = (ctx.podsOnNodes[node.metadata?.name] ?? []).filter(isActive);
  const alloc: Record<string, string> = node.status?.allocatable ?? {};
  const reasons: string[] = [];
  if (alloc.pods !== undefined && others.length + 1 > parseQuantity(alloc.pods))
    reasons.push("Too many pods");
  const used: Record<string, number> = {};
  for (const p of others) for (const [r, q] of Object.entries(podRequests(p))) used[r] = (used[r] ?? 0) + q;
  for (const [r, q] of Object.entries(podRequests(pod))) {
    if (q > 0 && q > parseQuantity(alloc[r] ?? "0") - (used[r] ?? 0)) reasons.push(`Insufficient ${r}`);
  }
  return reasons;
}

/** RuntimeClass admission's rejection text, or undefined when the class exists (or none is named). */
export function runtimeClassError(pod: Json, runtimeClasses: Json[]): string | undefined {
  const name = pod.spec?.runtimeClassName;
  if (!name || runtimeClasses.some((rc) => rc.metadata?.name === name)) return undefined;
  return `pod rejected: RuntimeClass "${name}" not found`;
}

const RESOLVABLE_BY_PREEMPTION = (r: string) => r.startsWith("Insufficient ") || r === "Too many pods";

export function schedule(pod: Json, nodes: Json[], ctx: ScheduleContext): ScheduleResult {
  if (nodes.length === 0) return { unschedulable: "no nodes available to schedule pods" };
  const rcErr = runtimeClassError(pod, ctx.runtimeClasses);
  // The real RuntimeClass admission rejects such pods at create; a pod that slipped through stays Pending here.
  if (rcErr) return { unschedulable: rcErr };
  const rc = ctx.runtimeClasses.find((r) => r.metadata?.name === pod.spec?.runtimeClassName);
  const feasible: Json[] = [];
  const histogram = new Map<string, number>();
  let preemptable = 0;
  for (const node of nodes) {
    const reasons = filterNode(pod, node, ctx, rc);
    if (reasons.length === 0) {
      feasible.push(node);
      continue;
    }
    for (const r of reasons) histogram.set(r, (histogram.get(r) ?? 0) + 1);
    if (reasons.every(RESOLVABLE_BY_PREEMPTION)) preemptable++;
  }
  if (feasible.length > 0) {
    // Scoring simplified: the node with the fewest active pods wins, ties broken by name.
    const count = (n: Json) => (ctx.podsOnNodes[n.metadata.name] ?? []).filter(isActive).length;
    feasible.sort((a, b) => count(a) - count(b) || String(a.metadata.name).localeCompare(b.metadata.name));
    return { nodeName: feasible[0].metadata.name };
  }
  const n = nodes.length;
  const filterMsg = [...histogram]
    .map(([r, c]) => `${c} ${r}`)
    .sort()
    .join(", ");
  // No pod priorities here, so preemption never finds victims.
  const post: string[] = [];
  if (preemptable > 0) post.push(`${preemptable} No preemption victims found for incoming pod`);
  if (n - preemptable > 0) post.push(`${n - preemptable} Preemption is not helpful for scheduling`);
  return {
    unschedulable: `0/${n} nodes are available: ${filterMsg}. preemption: 0/${n} nodes are available: ${post.join(", ")}.`,
  };
}

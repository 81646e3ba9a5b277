/** Pods of a Job: building them from the template, finding them, classifying them. */
import type { KObject } from "../store.ts";
import { controllerRef } from "./k8s.ts";

export const isTerminal = (p: KObject): boolean =>
  p.status?.phase === "Succeeded" || p.status?.phase === "Failed";
export const isActive = (p: KObject): boolean => !isTerminal(p) && !p.metadata.deletionTimestamp;
export const isReady = (p: KObject): boolean =>
  (p.status?.conditions ?? []).some(
    (c: { type: string; status: string }) => c.type === "Ready" && c.status === "True",
  );

interface LabelSelectorJson {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** metav1.LabelSelectorAsSelector, rendered in the string syntax the store parses. */
export function selectorString(sel: LabelSelectorJson | undefined): string {
  const parts = Object.entries(sel?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of sel?.matchExpressions ?? []) {
    const vals = (e.values ?? []).join(",");
    if (e.operator === "In") parts.push(`${e.key} in (${vals})`);
    else if (e.operator === "NotIn") parts.push(`${e.key} notin (${vals})`);
    else if (e.operator === "Exists") parts.push(e.key);
    else if (e.operator === "DoesNotExist") parts.push(`!${e.key}`);
  }
  return parts.join(",");
}

/** Only pods whose controller reference is this Job (label matches alone are forgeable). */
export function ownedPods(job: KObject, candidates: KObject[]): KObject[] {
  return candidates.filter((p) => controllerRef(p)?.uid === job.metadata.uid);
}

// Simplification: no job-tracking finalizer on pods; terminated pods are counted by UID in controller memory.
export function podFromTemplate(job: KObject): KObject {
  const t = structuredClone(job.spec?.template ?? {});
  const m = job.metadata;
  return {
    metadata: {
      generateName: `${m.name}-`,
      namespace: m.namespace,
      labels: { ...(t.metadata?.labels ?? {}) },
      ...(t.metadata?.annotations ? { annotations: t.metadata.annotations } : {}),
      ownerReferences: [
        {
          apiVersion: "batch/v1",
          kind: "Job",
          name: m.name!,
          uid: m.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: t.spec ?? {},
  };
}

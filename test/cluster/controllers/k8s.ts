/** Small helpers over plain Kubernetes JSON shared by the controllers. */
import { type KObject, RESOURCES, type ResourceType } from "../store.ts";

export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string | null;
}

export const apiVersionOf = (r: ResourceType): string =>
  r.group === "" ? r.version : `${r.group}/${r.version}`;

export function resourceForKind(apiVersion: string, kind: string): ResourceType | undefined {
  return RESOURCES.find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
}

export const keyFor = (namespace: string | undefined, name: string): string => `${namespace ?? ""}/${name}`;

export function splitKey(key: string): [string | undefined, string] {
  const i = key.indexOf("/");
  const ns = key.slice(0, i);
  return [ns === "" ? undefined : ns, key.slice(i + 1)];
}

export function getCondition(obj: KObject, type: string): Condition | undefined {
  return (obj.status?.conditions ?? []).find((c: Condition) => c.type === type);
}

export const isTrue = (obj: KObject, type: string): boolean => getCondition(obj, type)?.status === "True";

/** Sets a condition; lastTransitionTime only moves when the status flips, as the real helpers do. */
export function setCondition(conditions: Condition[], next: Condition, now: string): Condition[] {
  const i = conditions.findIndex((c) => c.type === next.type);
  const prev = conditions[i];
  const merged: Condition = {
    ...next,
    lastTransitionTime: prev && prev.status === next.status ? prev.lastTransitionTime : now,
  };
  if (next.lastProbeTime !== undefined) merged.lastProbeTime = next.lastProbeTime;
  if (i < 0) return [...conditions, merged];
  const out = [...conditions];
  out[i] = merged;
  return out;
}

export function controllerRef(obj: KObject) {
  return obj.metadata.ownerReferences?.find((o) => o.controller);
}

export const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export function isStatusError(e: unknown, code: number): boolean {
  return typeof e === "object" && e !== null && (e as { code?: unknown }).code === code;
}

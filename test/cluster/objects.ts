/** Plain Kubernetes object shapes the store works with (JSON as on the wire). */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
}

export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: any;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

export interface WatchEvent {
  type: WatchEventType;
  object: KObject | Record<string, unknown>;
}

export const FINALIZER_ORPHAN = "orphan";
export const FINALIZER_FOREGROUND = "foregroundDeletion";

export type PropagationPolicy = "Background" | "Foreground" | "Orphan";

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: PropagationPolicy;
  /** Legacy form of propagationPolicy=Orphan. */
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  dryRun?: boolean;
}

export function clone<T>(v: T): T {
  return structuredClone(v);
}

/** Frozen all the way down: a stored object is shared with every reader and must never change. */
export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === "object" && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

export function keyOf(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}/${name}`;
}

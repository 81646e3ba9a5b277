import type { PolicyRule } from "../rbac/rules.ts";
import type { LegacyKind } from "./_names.ts";

/** Which namespaces the namespaced legacy names are looked up in. */
export type Scope = { allNamespaces: true } | { allNamespaces: false; namespaces: string[] };

export interface Subject {
  kind: string;
  name: string;
  namespace?: string | undefined;
}

export interface RoleRef {
  apiGroup: string;
  kind: string;
  name: string;
}

/** What the plan needs of one object as the apiserver returned it; read once, at plan time. */
export interface ObservedObject {
  kind: LegacyKind;
  namespace?: string | undefined;
  name: string;
  uid: string;
  resourceVersion: string;
  labels: Record<string, string>;
  /** Role, ClusterRole. An aggregated ClusterRole is recorded as `aggregated`. */
  rules?: PolicyRule[] | undefined;
  aggregated?: boolean | undefined;
  /** Rules carrying resourceNames or nonResourceURLs, which no aicr version wrote. */
  unusualRules?: string[] | undefined;
  /** RoleBinding, ClusterRoleBinding. */
  roleRef?: RoleRef | undefined;
  subjects?: Subject[] | undefined;
  /** Job. */
  job?: ObservedJob | undefined;
}

/** What the guards read from a legacy Job: its ServiceAccount, its live pods, whether it finished. */
export interface ObservedJob {
  serviceAccountName: string;
  activePods: number;
  /** A Complete or Failed condition is True. */
  finished: boolean;
}

/** A namespace outside the scope whose legacy Jobs could not be read (guards fail closed there). */
export interface UnverifiedNamespace {
  namespace: string;
  reason: string;
}

export interface Observation {
  scope: Scope;
  /** Every legacy-named object found: cluster-scoped ones and those in the scope's namespaces. */
  objects: ObservedObject[];
  /** Legacy Jobs read outside the scope, only to guard cluster-scoped bindings; never deleted. */
  outsideJobs: ObservedObject[];
  unverified: UnverifiedNamespace[];
}

export type Action = "delete" | "keep";

export type Outcome =
  | "planned"
  | "kept"
  | "deleted"
  | "already-gone"
  | "changed since planned"
  | "failed"
  | "not attempted";

export interface PlanEntry {
  kind: LegacyKind;
  namespace?: string | undefined;
  name: string;
  uid: string;
  /** Captured at plan time; the delete's precondition. */
  resourceVersion: string;
  action: Action;
  reason: string;
}

export interface Plan {
  scope: Scope;
  entries: PlanEntry[];
}

export interface ReceiptEntry extends PlanEntry {
  outcome: Outcome;
  /** The apiserver's answer when the outcome is "failed". */
  error?: string | undefined;
}

export interface Receipt {
  scope: Scope;
  entries: ReceiptEntry[];
}

/**
 * The per-object safety guards: each returns why an object must be kept, or undefined when it
 * looks exactly like what a pre-isolation aicr made. Pure.
 */
import { LABEL } from "../core/labels.ts";
import {
  LEGACY_AGENT_SA,
  LEGACY_CLUSTER_ROLE,
  LEGACY_VALIDATOR_BINDING,
  LEGACY_VALIDATOR_SA,
  VALIDATOR_CLUSTER_ROLE,
} from "./_names.ts";
import { grantsBeyond, LEGACY_CLUSTER_GRANTS, LEGACY_ROLE_GRANTS, shortList } from "./_rule-subset.ts";
import type { ObservedObject, Scope, Subject } from "./types.ts";

export interface GuardOptions {
  scope: Scope;
  force: boolean;
  includeConfigMaps: boolean;
}

const RBAC_GROUP = "rbac.authorization.k8s.io";

export const subjectText = (s: Subject): string =>
  s.kind === "ServiceAccount" ? `ServiceAccount ${s.namespace ?? "?"}/${s.name}` : `${s.kind} ${s.name}`;

export function inScope(scope: Scope, namespace: string | undefined): boolean {
  return scope.allNamespaces || (namespace !== undefined && scope.namespaces.includes(namespace));
}

function runLabelGuard(o: ObservedObject): string | undefined {
  const runId = o.labels[LABEL.runId];
  if (runId === undefined) return undefined;
  return `carries the label ${LABEL.runId}=${JSON.stringify(runId)}: it belongs to a run, and run cleanup owns it`;
}

function rulesGuard(o: ObservedObject, allowed: typeof LEGACY_ROLE_GRANTS): string | undefined {
  if (o.aggregated) return "is an aggregated ClusterRole, which aicr never made: not aicr's";
  if (o.unusualRules && o.unusualRules.length > 0) {
    return `has rules with ${shortList(o.unusualRules)}, which aicr never wrote: not aicr's`;
  }
  const extra = grantsBeyond(o.rules ?? [], allowed);
  if (extra.length === 0) return undefined;
  return `grants ${shortList(extra)}, beyond anything aicr granted: a same-named role made by someone else`;
}

function roleRefGuard(o: ObservedObject, want: { kind: string; name: string }): string | undefined {
  const { kind, name } = want;
  const ref = o.roleRef;
  if (ref && ref.kind === kind && ref.name === name && ref.apiGroup === RBAC_GROUP) return undefined;
  const actual = ref ? `${ref.kind} ${JSON.stringify(ref.name)}` : "nothing";
  return `refers to ${actual}, not ${kind} ${JSON.stringify(name)}: not aicr's`;
}

function subjectsGuard(o: ObservedObject, accountName?: string): string | undefined {
  const odd = (o.subjects ?? []).filter(
    (s) => s.kind !== "ServiceAccount" || (accountName !== undefined && s.name !== accountName),
  );
  if (odd.length === 0) return undefined;
  const wanted = accountName ? `ServiceAccount ${JSON.stringify(accountName)}` : "ServiceAccounts";
  return `binds ${shortList(odd.map(subjectText))}, and aicr bound only ${wanted}: not aicr's`;
}

function validatorScopeGuard(o: ObservedObject, scope: Scope): string | undefined {
  const outside = (o.subjects ?? []).filter((s) => !inScope(scope, s.namespace));
  if (outside.length === 0) return undefined;
  const namespaces = [...new Set(outside.map((s) => s.namespace ?? "?"))];
  return `binds ${shortList(outside.map(subjectText))} in namespace(s) not in scope (${namespaces.join(", ")}); add -n for them or use --all-namespaces`;
}

export function jobActivity(o: ObservedObject): string | undefined {
  const job = o.job;
  if (!job) return undefined;
  if (job.activePods > 0) return `is still active (${job.activePods} active pod(s))`;
  if (!job.finished) return "has not finished (no Complete or Failed condition)";
  return undefined;
}

/** Why `o` is kept on its own merits, or undefined. Dependencies between objects are plan.ts's job. */
export function ownGuard(o: ObservedObject, options: GuardOptions): string | undefined {
  const labelled = runLabelGuard(o);
  if (labelled) return labelled;
  switch (o.kind) {
    case "ClusterRole":
      return rulesGuard(o, LEGACY_CLUSTER_GRANTS);
    case "Role":
      return rulesGuard(o, LEGACY_ROLE_GRANTS);
    case "RoleBinding":
      return roleRefGuard(o, { kind: "Role", name: LEGACY_AGENT_SA }) ?? subjectsGuard(o);
    case "ClusterRoleBinding":
      if (o.name === LEGACY_VALIDATOR_BINDING) {
        return (
          roleRefGuard(o, { kind: "ClusterRole", name: VALIDATOR_CLUSTER_ROLE }) ??
          subjectsGuard(o, LEGACY_VALIDATOR_SA) ??
          validatorScopeGuard(o, options.scope)
        );
      }
      return roleRefGuard(o, { kind: "ClusterRole", name: LEGACY_CLUSTER_ROLE }) ?? subjectsGuard(o);
    case "ConfigMap":
      return options.includeConfigMaps
        ? undefined
        : "may be a snapshot someone relies on; pass --include-configmaps to delete it";
    case "Job": {
      const activity = jobActivity(o);
      return activity && !options.force ? `${activity}; pass --force to delete it anyway` : undefined;
    }
    default:
      return undefined;
  }
}

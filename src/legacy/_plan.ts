/**
 * The cleanup plan: from what was observed, decide per object whether it goes and why. Pure — the
 * same observation always gives the same plan, so `--dry-run` prints exactly what a real run does.
 */
import { type GuardOptions, jobActivity, ownGuard, subjectText } from "./_guards.ts";
import { DELETE_ORDER } from "./_names.ts";
import { shortList } from "./_rule-subset.ts";
import type { Observation, ObservedObject, Plan, PlanEntry } from "./types.ts";

export type PlanOptions = Omit<GuardOptions, "scope">;

const keyOf = (namespace: string | undefined, name: string): string => `${namespace ?? ""}/${name}`;
const FORCE_HINT = "pass --force to delete it anyway";

/** ServiceAccount "ns/name" → the active legacy Job that runs as it. Empty with --force. */
function accountsInUse(obs: Observation, force: boolean): Map<string, string> {
  const inUse = new Map<string, string>();
  if (force) return inUse;
  for (const job of [...obs.objects, ...obs.outsideJobs]) {
    if (job.kind !== "Job" || !job.job || !jobActivity(job)) continue;
    const account = keyOf(job.namespace, job.job.serviceAccountName);
    if (!inUse.has(account)) inUse.set(account, `Job ${keyOf(job.namespace, job.name)}`);
  }
  return inUse;
}

interface Usage {
  inUse: Map<string, string>;
  /** Namespaces whose legacy Jobs could not be read; empty with --force. */
  unverified: Observation["unverified"];
}

/** Why `o` stays because an active legacy Job may still run with it, or undefined. */
function usageGuard(o: ObservedObject, use: Usage): string | undefined {
  const { inUse, unverified } = use;
  if (o.kind === "ServiceAccount") {
    const job = inUse.get(keyOf(o.namespace, o.name));
    return job ? `active legacy ${job} runs as it; ${FORCE_HINT}` : undefined;
  }
  if (o.kind !== "RoleBinding" && o.kind !== "ClusterRoleBinding") return undefined;
  for (const s of o.subjects ?? []) {
    if (s.kind !== "ServiceAccount") continue;
    const namespace = s.namespace ?? o.namespace;
    const job = inUse.get(keyOf(namespace, s.name));
    if (job)
      return `binds ${subjectText({ ...s, namespace })}, which active legacy ${job} runs as; ${FORCE_HINT}`;
  }
  if (o.kind !== "ClusterRoleBinding") return undefined;
  for (const s of o.subjects ?? []) {
    const unread = unverified.find((u) => u.namespace === s.namespace);
    if (unread) {
      return `binds ${subjectText(s)}, but the legacy Jobs in namespace ${JSON.stringify(unread.namespace)} could not be read (${unread.reason}), so an active one cannot be ruled out; ${FORCE_HINT}`;
    }
  }
  return undefined;
}

function deleteReason(o: ObservedObject): string {
  const subjects = shortList((o.subjects ?? []).map(subjectText)) || "no subjects";
  switch (o.kind) {
    case "Job": {
      const activity = jobActivity(o);
      return activity
        ? `legacy Job that ${activity}; deleted because of --force, its pods go too`
        : "legacy Job, finished; its pods go too";
    }
    case "ConfigMap":
      return "legacy snapshot ConfigMap; --include-configmaps was given";
    case "ClusterRole":
    case "Role":
      return `legacy agent ${o.kind}; every rule in it is one aicr granted`;
    case "ClusterRoleBinding":
    case "RoleBinding":
      return `legacy ${o.kind} of ${o.roleRef?.kind} ${JSON.stringify(o.roleRef?.name)} to ${subjects}`;
    default:
      return "legacy ServiceAccount; no active legacy Job runs as it";
  }
}

const entryOf = (o: ObservedObject, keep: string | undefined): PlanEntry => ({
  kind: o.kind,
  ...(o.namespace !== undefined ? { namespace: o.namespace } : {}),
  name: o.name,
  uid: o.uid,
  resourceVersion: o.resourceVersion,
  action: keep ? "keep" : "delete",
  reason: keep ?? deleteReason(o),
});

/** A kept binding keeps the legacy role it grants: deleting the role would break what is kept. */
function keepGrantedRoles(entries: PlanEntry[], objects: ObservedObject[]): void {
  for (const binding of objects) {
    if (binding.kind !== "RoleBinding" && binding.kind !== "ClusterRoleBinding") continue;
    const bindingEntry = entries.find((e) => e.uid === binding.uid);
    if (bindingEntry?.action !== "keep" || !binding.roleRef) continue;
    const roleKind = binding.kind === "RoleBinding" ? "Role" : "ClusterRole";
    const role = entries.find(
      (e) =>
        e.kind === roleKind &&
        binding.roleRef?.kind === roleKind &&
        e.name === binding.roleRef.name &&
        e.namespace === binding.namespace,
    );
    if (role?.action !== "delete") continue;
    role.action = "keep";
    role.reason = `${binding.kind} ${keyOf(binding.namespace, binding.name).replace(/^\//, "")}, which is kept, still grants it`;
  }
}

function compareEntries(a: PlanEntry, b: PlanEntry): number {
  const byKind = DELETE_ORDER.indexOf(a.kind) - DELETE_ORDER.indexOf(b.kind);
  if (byKind !== 0) return byKind;
  return keyOf(a.namespace, a.name).localeCompare(keyOf(b.namespace, b.name));
}

/** Every observed object with its action and reason, in deletion order. */
export function buildPlan(obs: Observation, options: PlanOptions): Plan {
  const guardOptions: GuardOptions = { ...options, scope: obs.scope };
  const use: Usage = {
    inUse: accountsInUse(obs, options.force),
    unverified: options.force ? [] : obs.unverified,
  };
  const entries = obs.objects.map((o) => entryOf(o, ownGuard(o, guardOptions) ?? usageGuard(o, use)));
  keepGrantedRoles(entries, obs.objects);
  return { scope: obs.scope, entries: entries.sort(compareEntries) };
}

export const toDelete = (plan: Plan): PlanEntry[] => plan.entries.filter((e) => e.action === "delete");

/**
 * platform-health (diagnostic): every namespace the recipe's components name is Active, and every
 * resource their `expectedResources` list is there and healthy. Every issue is collected (no early
 * exit) and all of them are reported. Never skips; creates nothing, writes no evidence.
 */
import { mapLimit } from "../../core/async.ts";
import type { ObjectRef } from "../../kube/client.ts";
import { type Outcome, readOutcome } from "./_read-outcome.ts";
import { getOptional, type WorkloadStatus } from "./_support.ts";
import { type CheckContext, type CheckRun, failed, passed, type Verdict } from "./context.ts";

/** The original's bound on each expected resource's read. */
export const RESOURCE_READ_MS = 10_000;
const PARALLEL_READS = 4;

export interface ExpectedResource {
  kind: string;
  name: string;
  namespace: string;
  /** The componentRef that lists it. */
  component: string;
}

export interface PlatformPlan {
  /** Distinct non-empty component namespaces, in recipe order. */
  namespaces: string[];
  resources: ExpectedResource[];
  /** Entries of the recipe that name nothing checkable: each is an issue. */
  malformed: string[];
}

const API_VERSIONS: Record<string, string> = {
  Deployment: "apps/v1",
  DaemonSet: "apps/v1",
  StatefulSet: "apps/v1",
  Service: "v1",
  ConfigMap: "v1",
  Secret: "v1",
};

const text = (x: unknown): string => (typeof x === "string" ? x.trim() : "");
const record = (x: unknown): Record<string, unknown> | undefined =>
  x !== null && typeof x === "object" && !Array.isArray(x) ? (x as Record<string, unknown>) : undefined;

/**
 * What the recipe's `spec.componentRefs` ask to be checked (pure, read defensively: the recipe schema
 * leaves the field untyped). An expected resource without a namespace is looked for in its component's.
 * Components disabled by an override are checked all the same, as the original does.
 */
export function platformPlan(componentRefs: unknown): PlatformPlan {
  const plan: PlatformPlan = { namespaces: [], resources: [], malformed: [] };
  if (componentRefs === undefined || componentRefs === null) return plan;
  if (!Array.isArray(componentRefs)) {
    plan.malformed.push("spec.componentRefs is not a list");
    return plan;
  }
  componentRefs.forEach((raw, i) => {
    const ref = record(raw);
    if (!ref) {
      plan.malformed.push(`spec.componentRefs[${i}] is not a map`);
      return;
    }
    const component = text(ref.name) || `componentRefs[${i}]`;
    const namespace = text(ref.namespace);
    if (namespace && !plan.namespaces.includes(namespace)) plan.namespaces.push(namespace);
    const expected = ref.expectedResources;
    if (expected === undefined || expected === null) return;
    if (!Array.isArray(expected)) {
      plan.malformed.push(`component ${component}: expectedResources is not a list`);
      return;
    }
    expected.forEach((e, j) => {
      const entry = record(e);
      const kind = text(entry?.kind);
      const name = text(entry?.name);
      const ns = text(entry?.namespace) || namespace;
      if (!kind || !name || !ns) {
        const lacking = [!kind && "kind", !name && "name", !ns && "namespace"].filter(Boolean).join(", ");
        plan.malformed.push(`component ${component}: expectedResources[${j}] has no ${lacking}`);
        return;
      }
      plan.resources.push({ kind, name, namespace: ns, component });
    });
  });
  return plan;
}

export interface PlatformReads {
  namespaces: { name: string; read: Outcome<{ status?: { phase?: string } }> }[];
  resources: { resource: ExpectedResource; read: Outcome<WorkloadStatus> }[];
}

/** One expected resource's state: its issue (undefined when healthy) and what was found (pure). */
export function resourceState(kind: string, o: Outcome<WorkloadStatus>): { issue?: string; state: string } {
  if (!API_VERSIONS[kind]) return { issue: "unsupported kind", state: "unsupported kind" };
  if (o.state === "error") return { issue: o.message, state: o.message };
  if (o.state === "absent") return { issue: "not found", state: "not found" };
  const s = o.value.status ?? {};
  const want = o.value.spec?.replicas ?? 1;
  switch (kind) {
    case "Deployment": {
      const have = s.availableReplicas ?? 0;
      const state = `${have} of ${want} replica(s) available`;
      return have >= want ? { state } : { issue: state, state };
    }
    case "DaemonSet": {
      const have = s.numberReady ?? 0;
      const desired = s.desiredNumberScheduled ?? 0;
      const state = `${have} of ${desired} pod(s) ready`;
      return have >= desired ? { state } : { issue: state, state };
    }
    case "StatefulSet": {
      const have = s.readyReplicas ?? 0;
      const state = `${have} of ${want} replica(s) ready`;
      return have >= want ? { state } : { issue: state, state };
    }
    default:
      return { state: "exists" };
  }
}

/** The verdict from the plan and its reads (pure): every issue in the message, every line in the details. */
export function platformHealthVerdict(plan: PlatformPlan, reads: PlatformReads): Verdict {
  const issues = [...plan.malformed];
  const details: string[] = [];
  for (const { name, read } of reads.namespaces) {
    let issue: string | undefined;
    let state: string;
    if (read.state === "error") issue = state = read.message;
    else if (read.state === "absent") issue = state = "not found";
    else {
      const phase = read.value.status?.phase ?? "unknown";
      state = phase;
      if (phase !== "Active") issue = `phase ${phase}, expected Active`;
    }
    details.push(`namespace ${name}: ${state}`);
    if (issue) issues.push(`namespace ${name}: ${issue}`);
  }
  for (const { resource: r, read } of reads.resources) {
    const { issue, state } = resourceState(r.kind, read);
    const what = `${r.kind} ${r.namespace}/${r.name} (${r.component})`;
    details.push(`${what}: ${state}`);
    if (issue) issues.push(`${what}: ${issue}`);
  }
  if (issues.length > 0) return failed(`${issues.length} platform issue(s): ${issues.join("; ")}`, details);
  if (reads.namespaces.length === 0 && reads.resources.length === 0)
    return passed(
      "the recipe's components name no namespace and no expected resource: nothing to check",
      details,
    );
  return passed(
    `${reads.namespaces.length} component namespace(s) Active, ${reads.resources.length} expected resource(s) healthy`,
    details,
  );
}

/** Reads every namespace and expected resource of the plan, a few at a time, each read bounded. */
export async function readPlatform(
  ctx: Pick<CheckContext, "client" | "signal" | "waitMs">,
  plan: PlatformPlan,
): Promise<PlatformReads> {
  const { client } = ctx;
  const bound = ctx.waitMs(RESOURCE_READ_MS);
  const namespaces = await mapLimit(
    plan.namespaces,
    PARALLEL_READS,
    async (name) => ({
      name,
      read: await readOutcome(
        () =>
          getOptional<{ status?: { phase?: string } }>(client, { apiVersion: "v1", kind: "Namespace", name }),
        { boundMs: bound, signal: ctx.signal, what: `reading Namespace ${name}` },
      ),
    }),
    ctx.signal,
  );
  const resources = await mapLimit(
    plan.resources,
    PARALLEL_READS,
    async (resource) => {
      const apiVersion = API_VERSIONS[resource.kind];
      if (!apiVersion) return { resource, read: { state: "absent" } as const };
      const ref: ObjectRef = {
        apiVersion,
        kind: resource.kind,
        namespace: resource.namespace,
        name: resource.name,
      };
      return {
        resource,
        read: await readOutcome(() => getOptional<WorkloadStatus>(client, ref), {
          boundMs: bound,
          signal: ctx.signal,
          what: `reading ${resource.kind} ${resource.namespace}/${resource.name}`,
        }),
      };
    },
    ctx.signal,
  );
  return { namespaces, resources };
}

export const run: CheckRun = async (ctx) => {
  if (!ctx.recipe)
    return failed(
      "no recipe: platform-health checks the namespaces and resources a recipe's components name",
    );
  const plan = platformPlan(ctx.recipe.spec.componentRefs);
  return platformHealthVerdict(plan, await readPlatform(ctx, plan));
};

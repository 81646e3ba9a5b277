/**
 * gang-scheduling (CNCF gang_scheduling): the KAI scheduler is healthy and starts a 2-member PodGroup of
 * DRA GPU pods together — both scheduled by kai-scheduler within 30 s of each other, both succeeding
 * (`aicr probe devices` sees the GPU of each pod's own claim). Skipped without the KAI scheduler.
 */
import { errorMessage } from "../../core/errors.ts";
import type { ObjectRef } from "../../kube/client.ts";
import { isNotFound } from "../../kube/errors.ts";
import {
  claimRef,
  cleanupEvidence,
  DRA_V1,
  deleteInOrder,
  exitCodeOf,
  GPU_DRIVER,
  gpuClaim,
  lastLine,
  type Manifest,
  manifestLines,
  POD_POLL_MS,
  POD_WAIT_MS,
  type Pod,
  podLog,
  podRef,
  probePod,
  type ResourceClaim,
  type ResourceSlice,
} from "./_dra.ts";
import {
  crdExists,
  deploymentAvailable,
  deploymentRef,
  describePod,
  getOptional,
  podEnded,
  pollFor,
  type WorkloadStatus,
} from "./_support.ts";
import { type CheckContext, type CheckRun, failed, passed, skipped, type Verdict } from "./context.ts";

export const KAI_NAMESPACE = "kai-scheduler";
export const KAI_SCHEDULER = "kai-scheduler";
/** The Deployment whose absence means "no KAI scheduler" (skip). */
export const KAI_DEFAULT_DEPLOYMENT = "kai-scheduler-default";
export const KAI_DEPLOYMENTS = [
  KAI_DEFAULT_DEPLOYMENT,
  "admission",
  "binder",
  "kai-operator",
  "pod-grouper",
  "podgroup-controller",
  "queue-controller",
] as const;
export const GANG_CRDS = ["queues.scheduling.run.ai", "podgroups.scheduling.run.ai"] as const;
export const PODGROUP_API = "scheduling.run.ai/v2alpha2";
export const QUEUE = "default-queue";
export const GROUP_NAME_LABEL = "pod-group.scheduling.run.ai/name";
export const GROUP_ID_LABEL = "pod-group.scheduling.run.ai/group-id";
export const QUEUE_LABEL = "kai.scheduler/queue";
/** The gang's size, and the GPUs it needs free (one each). */
export const GANG_SIZE = 2;
/** The longest the gang's PodScheduled times may spread (the original's co-schedule window). */
export const CO_SCHEDULE_WINDOW_MS = 30_000;
const CONTAINER = "worker";

/** GPUs the NVIDIA driver publishes and those claims hold, cluster-wide (pure). */
export function gpuAvailability(
  slices: readonly ResourceSlice[],
  claims: readonly ResourceClaim[],
): { total: number; allocated: number; free: number } {
  const total = slices
    .filter((s) => s.spec?.driver === GPU_DRIVER)
    .reduce((n, s) => n + (s.spec?.devices?.length ?? 0), 0);
  const allocated = claims.reduce(
    (n, c) =>
      n + (c.status?.allocation?.devices?.results ?? []).filter((r) => r.driver === GPU_DRIVER).length,
    0,
  );
  return { total, allocated, free: total - allocated };
}

/** When the pod's PodScheduled condition turned True (ms), or undefined. */
export function scheduledAt(pod: Pod): number | undefined {
  const c = pod.status?.conditions?.find((x) => x.type === "PodScheduled" && x.status === "True");
  const t = c?.lastTransitionTime ? Date.parse(String(c.lastTransitionTime)) : Number.NaN;
  return Number.isFinite(t) ? t : undefined;
}

/**
 * The gang's verdict from its finished pods (pure): each Succeeded, scheduled by kai-scheduler, in the
 * group, holding a claim, PodScheduled True; and the PodScheduled times at most `windowMs` apart.
 */
export function gangVerdict(
  pods: readonly { name: string; pod: Pod; log: string }[],
  group: string,
  windowMs = CO_SCHEDULE_WINDOW_MS,
): Verdict {
  const issues: string[] = [];
  const times: number[] = [];
  for (const { name, pod, log } of pods) {
    if (pod.status?.phase !== "Succeeded") {
      const code = exitCodeOf(pod, CONTAINER);
      issues.push(
        `pod ${name} did not succeed (phase ${pod.status?.phase ?? "Unknown"}${code !== undefined ? `, exit code ${code}` : ""}): ${lastLine(log) || "no output"}`,
      );
    }
    if (pod.spec?.schedulerName !== KAI_SCHEDULER)
      issues.push(
        `pod ${name} has schedulerName ${pod.spec?.schedulerName ?? "(none)"} (expected ${KAI_SCHEDULER})`,
      );
    if (pod.metadata?.labels?.[GROUP_NAME_LABEL] !== group)
      issues.push(`pod ${name} is not in PodGroup ${group} (label ${GROUP_NAME_LABEL})`);
    if ((pod.spec?.resourceClaims ?? []).length === 0) issues.push(`pod ${name} holds no ResourceClaim`);
    const at = scheduledAt(pod);
    if (at === undefined) issues.push(`pod ${name} has no PodScheduled=True condition`);
    else times.push(at);
  }
  if (issues.length > 0)
    return failed(
      issues.length === 1
        ? (issues[0] ?? "")
        : `${issues.length} problems with the gang: ${issues.join("; ")}`,
      issues,
    );
  const span = Math.max(...times) - Math.min(...times);
  if (span > windowMs)
    return failed(
      `the gang was not scheduled together: its ${pods.length} pods were scheduled ${Math.round(span / 1000)} s apart (allowed ${Math.round(windowMs / 1000)} s)`,
    );
  return passed(
    `PodGroup ${group} (minMember ${GANG_SIZE}): ${pods.length} pods scheduled by ${KAI_SCHEDULER} within ${Math.round(span / 1000)} s of each other (allowed ${Math.round(windowMs / 1000)} s), each got its GPU through its own ResourceClaim`,
  );
}

/** The pods' scheduling, for the evidence: scheduler and time of each, the span, the window. */
export function scheduleLines(
  pods: readonly { name: string; pod: Pod }[],
  windowMs = CO_SCHEDULE_WINDOW_MS,
): string {
  const lines: string[] = [];
  const times: number[] = [];
  for (const { name, pod } of pods) {
    const at = scheduledAt(pod);
    if (at !== undefined) times.push(at);
    lines.push(
      `${name}: phase ${pod.status?.phase ?? "Unknown"}, scheduler ${pod.spec?.schedulerName ?? "(none)"}, node ${pod.spec?.nodeName ?? "(none)"}, scheduled ${at !== undefined ? new Date(at).toISOString() : "(not scheduled)"}`,
    );
  }
  if (times.length > 0) {
    const min = Math.min(...times);
    const max = Math.max(...times);
    lines.push(
      `earliest: ${new Date(min).toISOString()}`,
      `latest: ${new Date(max).toISOString()}`,
      `span: ${Math.round((max - min) / 1000)} s`,
    );
  }
  lines.push(`allowed window: ${Math.round(windowMs / 1000)} s`);
  return lines.join("\n");
}

/** The KAI scheduler's health (pure): the Deployments that are not available, the CRDs missing. */
export function kaiHealthIssue(
  deployments: readonly { name: string; workload: WorkloadStatus | undefined }[],
  pods: { error: string } | unknown[],
  crds: readonly { name: string; exists: boolean }[],
): Verdict | undefined {
  const down = deployments.filter((d) => !deploymentAvailable(d.workload));
  if (down.length > 0)
    return failed(
      `KAI scheduler Deployment${down.length > 1 ? "s" : ""} not available in namespace ${KAI_NAMESPACE}: ${down
        .map(
          (d) =>
            `${d.name} (${d.workload ? `${d.workload.status?.availableReplicas ?? 0} available` : "not found"})`,
        )
        .join(", ")}`,
    );
  if ("error" in pods)
    return failed(`the pods in namespace ${KAI_NAMESPACE} cannot be listed: ${pods.error}`);
  const missing = crds.filter((c) => !c.exists).map((c) => c.name);
  if (missing.length > 0)
    return failed(`gang scheduling CRD${missing.length > 1 ? "s" : ""} not installed: ${missing.join(", ")}`);
  return undefined;
}

async function listAll<T extends object>(ctx: CheckContext, apiVersion: string, kind: string): Promise<T[]> {
  const items: T[] = [];
  let continueToken: string | undefined;
  do {
    const page = await ctx.client.list<T>(apiVersion, kind, { limit: 500, continueToken });
    items.push(...page.items);
    continueToken = page.continueToken;
  } while (continueToken);
  return items;
}

export const run: CheckRun = async (ctx) => {
  const { client } = ctx;
  try {
    await client.get(deploymentRef(KAI_NAMESPACE, KAI_DEFAULT_DEPLOYMENT));
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return skipped(
      `the KAI scheduler is not installed: Deployment ${KAI_NAMESPACE}/${KAI_DEFAULT_DEPLOYMENT} ${isNotFound(err) ? "not found" : `cannot be read: ${errorMessage(err)}`}`,
    );
  }
  let pre: Verdict | undefined;
  try {
    pre = await preflight(ctx);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return failed(`the KAI scheduler's state cannot be read: ${errorMessage(err)}`);
  }
  if (pre) return pre;
  return gangTest(ctx);
};

async function preflight(ctx: CheckContext): Promise<Verdict | undefined> {
  const { client } = ctx;
  const deployments = await Promise.all(
    KAI_DEPLOYMENTS.map(async (name) => ({
      name,
      workload: await getOptional<WorkloadStatus>(client, deploymentRef(KAI_NAMESPACE, name)),
    })),
  );
  ctx.evidence(
    "KAI scheduler deployments",
    deployments
      .map(
        (d) =>
          `${d.name}\t${d.workload ? `available ${d.workload.status?.availableReplicas ?? 0}/${d.workload.spec?.replicas ?? 1}` : "not found"}`,
      )
      .join("\n"),
    `kubectl get deployments -n ${KAI_NAMESPACE}`,
  );
  const pods = await client
    .list<Pod>("v1", "Pod", { namespace: KAI_NAMESPACE })
    .then((l) => l.items)
    .catch((err: unknown) => ({ error: errorMessage(err) }));
  const crds = await Promise.all(
    GANG_CRDS.map(async (name) => ({ name, exists: await crdExists(client, name) })),
  );
  const down = kaiHealthIssue(deployments, [], []);
  if (down) return down;
  ctx.evidence(
    "KAI scheduler pods",
    "error" in pods
      ? `error: ${pods.error}`
      : pods.map((p) => `${p.metadata?.name}\t${p.status?.phase ?? "Unknown"}`).join("\n") || "(none)",
    `kubectl get pods -n ${KAI_NAMESPACE}`,
  );
  const unlisted = kaiHealthIssue([], pods, []);
  if (unlisted) return unlisted;
  ctx.evidence(
    "Gang Scheduling CRDs",
    crds.map((c) => `${c.name}\t${c.exists ? "installed" : "not found"}`).join("\n"),
    `kubectl get crd ${GANG_CRDS.join(" ")}`,
  );
  const crdIssue = kaiHealthIssue([], [], crds);
  if (crdIssue) return crdIssue;
  const [slices, claims] = await Promise.all([
    listAll<ResourceSlice>(ctx, DRA_V1, "ResourceSlice"),
    listAll<ResourceClaim>(ctx, DRA_V1, "ResourceClaim"),
  ]);
  const gpus = gpuAvailability(slices, claims);
  ctx.evidence(
    "GPU Availability",
    `Total GPUs (${GPU_DRIVER} ResourceSlices): ${gpus.total}\nAllocated by ResourceClaims: ${gpus.allocated}\nFree: ${gpus.free}\nRequired: ${GANG_SIZE}`,
    "kubectl get resourceslices,resourceclaims -A",
  );
  if (gpus.free < GANG_SIZE)
    return failed(
      `not enough free GPUs for the gang test: ${gpus.free} free of ${gpus.total} published by ${GPU_DRIVER} (${gpus.allocated} allocated), ${GANG_SIZE} required`,
    );
  return undefined;
}

async function gangTest(ctx: CheckContext): Promise<Verdict> {
  const ns = ctx.testNamespace;
  const group = ctx.name("gang-group");
  const members = Array.from({ length: GANG_SIZE }, (_, i) => ({
    pod: ctx.name(`gang-worker-${i}`),
    claim: ctx.name(`gang-gpu-claim-${i}`),
  }));
  const pods: { ref: ObjectRef; uid?: string | undefined }[] = [];
  const claims: { ref: ObjectRef; uid?: string | undefined }[] = [];
  const groupRef = { apiVersion: PODGROUP_API, kind: "PodGroup", namespace: ns, name: group };
  let groupUid: string | undefined;
  let cleanup: string[] = [];
  try {
    const made: { kind?: string; metadata?: { name?: string; namespace?: string } }[] = [];
    const podGroup = await ctx.client.create<Manifest>({
      apiVersion: PODGROUP_API,
      kind: "PodGroup",
      metadata: { name: group, namespace: ns, labels: { ...ctx.labels } },
      spec: { minMember: GANG_SIZE, queue: QUEUE },
    });
    groupUid = podGroup.metadata?.uid;
    made.push(podGroup);
    for (const m of members) {
      const claim = await ctx.client.create(gpuClaim(ctx, m.claim, { [QUEUE_LABEL]: QUEUE }));
      claims.push({ ref: claimRef(ns, m.claim), uid: claim.metadata?.uid });
      const pod = await ctx.client.create(
        probePod(ctx, {
          name: m.pod,
          container: CONTAINER,
          args: ["probe", "devices"],
          claimName: m.claim,
          schedulerName: KAI_SCHEDULER,
          extraLabels: { [GROUP_NAME_LABEL]: group, [GROUP_ID_LABEL]: group },
        }),
      );
      pods.push({ ref: podRef(ns, m.pod), uid: pod.metadata?.uid });
      made.push(claim, pod);
    }
    ctx.evidence("Apply test manifest", manifestLines(made), "kubectl apply -f gang-scheduling-test.yaml");

    // Both pods to their end; a failed read ends the test (no fail-fast on a pending pod here).
    const waitMs = ctx.waitMs(POD_WAIT_MS);
    let last: Pod[] = [];
    const ended = await pollFor(ctx, { intervalMs: POD_POLL_MS, maxMs: waitMs }, async () => {
      last = await Promise.all(members.map((m) => ctx.client.get<Pod>(podRef(ns, m.pod))));
      return last.every(podEnded) ? last : undefined;
    });
    const pg = await getOptional<{ spec?: { minMember?: number; queue?: string }; status?: unknown }>(
      ctx.client,
      groupRef,
    ).catch(() => undefined);
    ctx.evidence(
      "PodGroup status",
      `PodGroup ${group}: minMember ${pg?.spec?.minMember ?? "?"}, queue ${pg?.spec?.queue ?? "?"}${pg?.status ? `\nstatus: ${JSON.stringify(pg.status)}` : ""}`,
      `kubectl get podgroup ${group} -n ${ns} -o yaml`,
    );
    const named = members.map((m, i) => ({ name: m.pod, pod: last[i] as Pod }));
    ctx.evidence(
      "Pod status",
      scheduleLines(named.filter((p) => p.pod)),
      `kubectl get pods -n ${ns} -o wide`,
    );
    if (!ended)
      return failed(
        `the gang's pods did not all finish within ${Math.round(waitMs / 1000)} s: ${named.map((p) => `${p.name} (${describePod(p.pod)})`).join("; ")}`,
      );
    const withLogs: { name: string; pod: Pod; log: string }[] = [];
    for (const [i, p] of named.entries()) {
      const log = await podLog(ctx, ns, p.name, CONTAINER);
      ctx.evidence(`gang-worker-${i} logs`, log, `kubectl logs ${p.name} -n ${ns}`);
      withLogs.push({ ...p, log });
    }
    return gangVerdict(withLogs, group);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return failed(`the gang scheduling test could not run: ${errorMessage(err)}`);
  } finally {
    // Pods first (their claims' reservations lift), then the claims, then the PodGroup.
    cleanup = await deleteInOrder(ctx, [
      ...pods,
      ...claims,
      ...(groupUid ? [{ ref: groupRef, uid: groupUid }] : []),
    ]);
    ctx.evidence("Delete test namespace", cleanupEvidence(ns, cleanup));
  }
}

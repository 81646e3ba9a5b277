/**
 * What pod-autoscaling and cluster-autoscaling share: the test Deployment (this project's image running
 * `aicr probe sleep`, restricted security, the run's placement), the HPA on the external metric
 * dcgm_gpu_power_usage, the HPA's scale-up intent, and polled reads whose errors are retried.
 */
import type { KubeClient, ObjectRef } from "../../kube/client.ts";
import { errorText } from "./_read-outcome.ts";
import { deleteQuietly, PROBE_CONTAINER_SECURITY, PROBE_POD_SECURITY, pollFor } from "./_support.ts";
import type { CheckContext } from "./context.ts";

/** The external metric prometheus-adapter serves: the cluster's 2-minute average GPU power draw (W). */
export const POWER_METRIC = "dcgm_gpu_power_usage";
/** The HPAs' target average: an idle GPU draws more, so the HPA always wants to scale up. */
export const POWER_TARGET = "10";
/** The original's waits. */
export const HPA_INTENT_WAIT_MS = 180_000;
export const POLL_MS = 10_000;

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  [key: string]: unknown;
}

export const refOf = (m: Manifest): ObjectRef => ({
  apiVersion: m.apiVersion,
  kind: m.kind,
  namespace: m.metadata.namespace,
  name: m.metadata.name,
});

export interface SleepDeploymentSpec {
  name: string;
  container: string;
  seconds: number;
  requests: Record<string, string>;
  limits?: Record<string, string>;
  /** Merged over the run's --node-selector (these win). */
  nodeSelector?: Record<string, string>;
  /** Added to the run's --toleration. */
  tolerations?: { key?: string; operator: string; value?: string; effect?: string }[];
}

/** A one-replica Deployment of `aicr probe sleep <seconds>` in the check's namespace (pure). */
export function sleepDeployment(
  ctx: Pick<CheckContext, "testNamespace" | "labels" | "image" | "placement">,
  s: SleepDeploymentSpec,
): Manifest {
  const podLabels = { ...ctx.labels, app: s.name };
  const nodeSelector = { ...(ctx.placement.nodeSelector ?? {}), ...(s.nodeSelector ?? {}) };
  const tolerations = [...(s.tolerations ?? []), ...(ctx.placement.tolerations ?? [])];
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: s.name, namespace: ctx.testNamespace, labels: { ...ctx.labels, app: s.name } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: s.name } },
      template: {
        metadata: { labels: podLabels },
        spec: {
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 5,
          ...(Object.keys(nodeSelector).length > 0 ? { nodeSelector } : {}),
          ...(tolerations.length > 0 ? { tolerations } : {}),
          securityContext: PROBE_POD_SECURITY,
          containers: [
            {
              name: s.container,
              image: ctx.image,
              command: ["aicr"],
              args: ["probe", "sleep", String(s.seconds)],
              securityContext: PROBE_CONTAINER_SECURITY,
              resources: { requests: s.requests, ...(s.limits ? { limits: s.limits } : {}) },
            },
          ],
        },
      },
    },
  };
}

/** An autoscaling/v2 HPA of `deployment` on the external power metric, target average 10 (pure). */
export function powerHpa(
  ctx: Pick<CheckContext, "testNamespace" | "labels">,
  o: { name: string; deployment: string; maxReplicas: number; scaleDownAtOnce: boolean },
): Manifest {
  return {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: { name: o.name, namespace: ctx.testNamespace, labels: { ...ctx.labels } },
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: o.deployment },
      minReplicas: 1,
      maxReplicas: o.maxReplicas,
      metrics: [
        {
          type: "External",
          external: {
            metric: { name: POWER_METRIC },
            target: { type: "AverageValue", averageValue: POWER_TARGET },
          },
        },
      ],
      ...(o.scaleDownAtOnce ? { behavior: { scaleDown: { stabilizationWindowSeconds: 0 } } } : {}),
    },
  };
}

export interface HpaState {
  metadata?: { resourceVersion?: string };
  spec?: {
    metrics?: { type?: string; external?: { target?: { averageValue?: string } } }[];
  };
  status?: {
    currentReplicas?: number;
    desiredReplicas?: number;
    currentMetrics?: {
      external?: { metric?: { name?: string }; current?: { averageValue?: string; value?: string } };
    }[];
    conditions?: { type?: string; status?: string; reason?: string; message?: string }[];
  };
}

/**
 * Whether the HPA wants more replicas than it started with (pure): desired above current (the
 * original's test), or desired above the Deployment's 1 replica — an HPA whose loop runs faster than
 * the poll has already scaled, and current has caught up with desired, by the time it is read.
 */
export const hpaWantsMore = (hpa: HpaState | undefined): boolean => {
  const desired = hpa?.status?.desiredReplicas ?? 0;
  const current = hpa?.status?.currentReplicas ?? 0;
  return desired > current || desired > 1;
};

/** The HPA's state in one line: replicas, the metric's value, each condition that is not True (pure). */
export function describeHpa(hpa: HpaState | undefined): string {
  if (!hpa) return "never read";
  const s = hpa.status ?? {};
  const metric = s.currentMetrics?.find((m) => m.external?.metric?.name === POWER_METRIC)?.external?.current;
  const value = metric?.averageValue ?? metric?.value;
  const notTrue = (s.conditions ?? [])
    .filter((c) => c.status !== "True")
    .map((c) => `${c.type}=${c.status} (${c.reason ?? "no reason"}${c.message ? `: ${c.message}` : ""})`);
  return [
    `desiredReplicas ${s.desiredReplicas ?? 0}, currentReplicas ${s.currentReplicas ?? 0}`,
    ...(value !== undefined ? [`${POWER_METRIC} average ${value}`] : []),
    ...notTrue,
  ].join("; ");
}

/** A duration as the operator reads it: 3m0s, 45s, 2.5s (pure). */
export function duration(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 100) / 10}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${s % 60}s`;
}

/**
 * GETs `ref` every `intervalMs` (errors retried, the last one kept) until `done` holds, for at most
 * `maxMs` and never past the check's deadline. The last object read is returned either way.
 */
export async function pollObject<T>(
  ctx: Pick<CheckContext, "client" | "sleep" | "now" | "signal">,
  ref: ObjectRef,
  o: { intervalMs: number; maxMs: number },
  done: (obj: T) => boolean,
): Promise<{ ok: boolean; last: T | undefined; lastError: string | undefined }> {
  let last: T | undefined;
  let lastError: string | undefined;
  const ok = await pollFor(ctx, o, async () => {
    try {
      last = await ctx.client.get<T & object>(ref);
      lastError = undefined;
    } catch (err) {
      lastError = errorText(err);
      return undefined;
    }
    return done(last) ? true : undefined;
  }).catch((err) => {
    if (ctx.signal.aborted) return undefined;
    throw err;
  });
  return { ok: ok === true, last, lastError };
}

export interface Created {
  ref: ObjectRef;
  uid: string | undefined;
}

/** Creates `m` and records it (with its UID) for the check's cleanup. */
export async function createRecorded(client: KubeClient, m: Manifest, created: Created[]): Promise<void> {
  const made = await client.create<Manifest & { metadata: { uid?: string } }>(m);
  created.push({ ref: refOf(m), uid: made.metadata?.uid });
}

/** Deletes what the check created, newest first, each pinned to its UID; never throws. What was asked to go. */
export async function deleteCreated(client: KubeClient, created: readonly Created[]): Promise<string[]> {
  const gone: string[] = [];
  for (const c of [...created].reverse()) {
    await deleteQuietly(client, c.ref, c.uid);
    gone.push(`${c.ref.kind}/${c.ref.name}`);
  }
  return gone;
}

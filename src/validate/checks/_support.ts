/**
 * What several checks share: optional reads, availability, polling on the check's deadline, the probe
 * pod's wait with its fail-fast rules, and a Service's address read from its EndpointSlices.
 */
import { AicrError } from "../../core/errors.ts";
import type { KubeClient, ObjectRef } from "../../kube/client.ts";
import { isNotFound } from "../../kube/errors.ts";
import type { Json, V1Pod } from "../../kube/types.ts";
import type { CheckContext } from "./context.ts";

/** A read whose NotFound is an answer: undefined. Other errors propagate. */
export async function getOptional<T extends object>(
  client: KubeClient,
  ref: ObjectRef,
): Promise<T | undefined> {
  try {
    return await client.get<T>(ref);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export interface WorkloadStatus {
  metadata?: { name?: string; namespace?: string };
  spec?: { replicas?: number };
  status?: {
    availableReplicas?: number;
    readyReplicas?: number;
    replicas?: number;
    numberReady?: number;
    desiredNumberScheduled?: number;
  };
}

/** The original's "available": at least one available replica. */
export const deploymentAvailable = (d: WorkloadStatus | undefined): boolean =>
  (d?.status?.availableReplicas ?? 0) >= 1;

export const deploymentRef = (namespace: string, name: string): ObjectRef => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  namespace,
  name,
});
export const daemonSetRef = (namespace: string, name: string): ObjectRef => ({
  apiVersion: "apps/v1",
  kind: "DaemonSet",
  namespace,
  name,
});

/** Whether a CustomResourceDefinition exists (GET by name). */
export async function crdExists(client: KubeClient, name: string): Promise<boolean> {
  const crd = await getOptional(client, {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    name,
  });
  return crd !== undefined;
}

/**
 * Calls `probe` every `intervalMs` until it returns a value, for at most `maxMs` (and never past the
 * check's deadline); undefined when the time ran out.
 */
export async function pollFor<T>(
  ctx: Pick<CheckContext, "sleep" | "now" | "signal">,
  o: { intervalMs: number; maxMs: number },
  probe: () => Promise<T | undefined>,
): Promise<T | undefined> {
  const end = ctx.now() + o.maxMs;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (ctx.now() + o.intervalMs > end || ctx.signal.aborted) return undefined;
    await ctx.sleep(o.intervalMs);
  }
}

type Pod = Json<V1Pod>;

const STUCK_WAITING = new Set(["ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CrashLoopBackOff"]);

/** Why a pending pod will never run (the original's fail-fast reasons), or undefined. */
export function podStuck(pod: Pod): string | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const s of statuses) {
    const reason = s.state?.waiting?.reason;
    if (reason && STUCK_WAITING.has(reason))
      return `container ${s.name} is waiting: ${reason}${s.state?.waiting?.message ? `: ${s.state.waiting.message}` : ""}`;
  }
  const scheduled = pod.status?.conditions?.find((c) => c.type === "PodScheduled");
  if (scheduled?.status === "False" && scheduled.reason === "Unschedulable")
    return `pod is unschedulable: ${scheduled.message ?? "no reason given"}`;
  return undefined;
}

export const podEnded = (pod: Pod): boolean =>
  pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";

/** A pod's one-line state for a timeout message: its phase, a waiting reason, its node. */
export function describePod(pod: Pod | undefined): string {
  if (!pod) return "never seen";
  const waiting = pod.status?.containerStatuses?.find((s) => s.state?.waiting)?.state?.waiting?.reason;
  return `phase ${pod.status?.phase ?? "Unknown"}${waiting ? `, waiting: ${waiting}` : ""}, node ${pod.spec?.nodeName ?? "(none)"}`;
}

/**
 * Polls a pod the check created (every 500 ms, up to `maxMs`) until it Succeeds or Fails. NotFound and
 * a rate limiter's refusal are retried; a pod the cluster will never run fails fast (`stuck`); the time
 * running out is `timeout` with the pod's last state.
 */
export async function waitPodEnd(
  ctx: Pick<CheckContext, "client" | "sleep" | "now" | "signal">,
  namespace: string,
  name: string,
  o: { maxMs: number; failFast?: boolean },
): Promise<
  | { kind: "ended"; pod: Pod }
  | { kind: "stuck"; pod: Pod; reason: string }
  | { kind: "timeout"; last: Pod | undefined }
> {
  let last: Pod | undefined;
  const outcome = await pollFor(ctx, { intervalMs: 500, maxMs: o.maxMs }, async () => {
    try {
      last = await ctx.client.get<Pod>({ apiVersion: "v1", kind: "Pod", namespace, name });
    } catch (err) {
      if (isNotFound(err) || (err instanceof AicrError && err.code === "RATE_LIMIT_EXCEEDED"))
        return undefined;
      throw err;
    }
    if (podEnded(last)) return { kind: "ended" as const, pod: last };
    const stuck = o.failFast === false ? undefined : podStuck(last);
    return stuck ? { kind: "stuck" as const, pod: last, reason: stuck } : undefined;
  });
  return outcome ?? { kind: "timeout", last };
}

/** Deletes an object the check created; NotFound is fine. Never throws (cleanup runs on every path). */
export async function deleteQuietly(client: KubeClient, ref: ObjectRef, uid?: string): Promise<void> {
  await client.delete(ref, uid ? { uid } : {}).catch(() => {});
}

interface EndpointSlice {
  metadata?: { name?: string; labels?: Record<string, string> };
  addressType?: string;
  ports?: { name?: string; port?: number }[];
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean } }[];
}

/**
 * `http://<ready endpoint>:<port>` of a Service, read from its EndpointSlices through the API (no
 * cluster DNS needed): the first ready address, the slice's port for `port` (the Service's targetPort
 * as the EndpointSlice controller wrote it, else `port` itself). Undefined when no endpoint is ready.
 */
export async function serviceEndpointUrl(
  client: KubeClient,
  namespace: string,
  service: string,
  port: number,
): Promise<string | undefined> {
  const svc = await getOptional<{
    spec?: { ports?: { port?: number; name?: string; targetPort?: number | string }[] };
  }>(client, { apiVersion: "v1", kind: "Service", namespace, name: service });
  if (!svc) return undefined;
  const servicePort = svc.spec?.ports?.find((p) => p.port === port);
  const slices = await client.list<EndpointSlice>("discovery.k8s.io/v1", "EndpointSlice", {
    namespace,
    labelSelector: `kubernetes.io/service-name=${service}`,
  });
  for (const slice of slices.items) {
    const sp =
      slice.ports?.find((p) => servicePort?.name !== undefined && p.name === servicePort.name) ??
      slice.ports?.[0];
    const target = sp?.port ?? (typeof servicePort?.targetPort === "number" ? servicePort.targetPort : port);
    for (const e of slice.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      const address = e.addresses?.[0];
      if (address) return `http://${slice.addressType === "IPv6" ? `[${address}]` : address}:${target}`;
    }
  }
  return undefined;
}

/** The tolerations every probe pod carries: all taints, as the original's test pods do. */
export const TOLERATE_ALL = [{ operator: "Exists" }];

/** The restricted pod security a probe pod runs with (the project's image runs as nobody). */
export const PROBE_POD_SECURITY = {
  runAsNonRoot: true,
  runAsUser: 65534,
  runAsGroup: 65534,
  seccompProfile: { type: "RuntimeDefault" },
};
export const PROBE_CONTAINER_SECURITY = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ["ALL"] },
  seccompProfile: { type: "RuntimeDefault" },
};

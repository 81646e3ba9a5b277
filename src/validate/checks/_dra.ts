/**
 * What dra-support, secure-accelerator-access and gang-scheduling share: the DRA API's presence, the
 * one-GPU ResourceClaim and the probe pods that hold it (or not), ResourceSlice and claim summaries,
 * pod logs, and the delete-then-wait cleanup — every object in the check's own namespace, named with
 * the run ID and labelled with the run's labels.
 */
import { Writable } from "node:stream";
import type { KubeClient, ObjectRef } from "../../kube/client.ts";
import { isNotFound } from "../../kube/errors.ts";
import type { Json, V1Pod } from "../../kube/types.ts";
import {
  deleteQuietly,
  PROBE_CONTAINER_SECURITY,
  PROBE_POD_SECURITY,
  pollFor,
  TOLERATE_ALL,
} from "./_support.ts";
import type { CheckContext } from "./context.ts";

export type Pod = Json<V1Pod>;

export const DRA_GROUP = "resource.k8s.io";
export const DRA_V1 = "resource.k8s.io/v1";
export const DRA_V1BETA1 = "resource.k8s.io/v1beta1";
/** The NVIDIA DRA driver's DeviceClass and driver name. */
export const GPU_DEVICE_CLASS = "gpu.nvidia.com";
export const GPU_DRIVER = "gpu.nvidia.com";
/** The claim's one request, and the pod's claim entry that names it. */
export const GPU_REQUEST = "gpu";

/** The original's constants: DRA and gang pod waits, their poll, the cleanup's bound. */
export const POD_WAIT_MS = 5 * 60_000;
export const POD_POLL_MS = 500;
export const CLEANUP_MS = 30_000;

/** A pod log is cut to its last lines in evidence and messages. */
const LOG_TAIL_LINES = 50;
const LOG_MAX_BYTES = 64 * 1024;

/** An object the check creates, as sent (and as the create's answer is read: its UID). */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    uid?: string;
    resourceVersion?: string;
  };
  spec: Record<string, unknown>;
}

export interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** The resources a group version serves, or undefined when the apiserver does not serve it (404). */
export async function servedResources(
  client: KubeClient,
  groupVersion: string,
): Promise<ApiResource[] | undefined> {
  try {
    return await client.apiResources(groupVersion);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export const resourceLines = (resources: readonly ApiResource[]): string =>
  resources.map((r) => `${r.name}\t${r.kind}\tnamespaced=${r.namespaced}`).join("\n");

export interface ResourceClaim {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
  };
  spec?: unknown;
  status?: {
    allocation?: {
      devices?: { results?: { request?: string; driver?: string; pool?: string; device?: string }[] };
      nodeSelector?: unknown;
    };
    reservedFor?: { resource?: string; name?: string; uid?: string }[];
  };
}

export interface ResourceSlice {
  metadata?: { name?: string };
  spec?: {
    driver?: string;
    nodeName?: string;
    allNodes?: boolean;
    pool?: { name?: string; generation?: number; resourceSliceCount?: number };
    devices?: { name?: string; attributes?: Record<string, unknown>; capacity?: Record<string, unknown> }[];
  };
}

/** The ResourceClaim of one GPU from the NVIDIA DeviceClass (ExactCount 1), as the original asks for it. */
export function gpuClaim(
  ctx: Pick<CheckContext, "testNamespace" | "labels">,
  name: string,
  extraLabels: Record<string, string> = {},
): Manifest {
  return {
    apiVersion: DRA_V1,
    kind: "ResourceClaim",
    metadata: { name, namespace: ctx.testNamespace, labels: { ...ctx.labels, ...extraLabels } },
    spec: {
      devices: {
        requests: [
          {
            name: GPU_REQUEST,
            exactly: { deviceClassName: GPU_DEVICE_CLASS, allocationMode: "ExactCount", count: 1 },
          },
        ],
      },
    },
  };
}

export const claimRef = (namespace: string, name: string): ObjectRef => ({
  apiVersion: DRA_V1,
  kind: "ResourceClaim",
  namespace,
  name,
});
export const podRef = (namespace: string, name: string): ObjectRef => ({
  apiVersion: "v1",
  kind: "Pod",
  namespace,
  name,
});

export interface ProbePodSpec {
  name: string;
  container: string;
  /** What `aicr` runs: ["probe", "devices"], ["probe", "devices", "--expect", "none"]. */
  args: string[];
  /** The claim the container holds (entry `gpu`); none for the isolation probe. */
  claimName?: string | undefined;
  /** Bound to this node past the scheduler (the isolation probe on the claim pod's node). */
  nodeName?: string | undefined;
  schedulerName?: string | undefined;
  extraLabels?: Record<string, string> | undefined;
}

/**
 * A probe pod: this project's image running `aicr <args>`, never restarted, tolerating every taint
 * plus the run's placement, no ServiceAccount token, the restricted security profile.
 */
export function probePod(
  ctx: Pick<CheckContext, "testNamespace" | "labels" | "image" | "placement">,
  p: ProbePodSpec,
): Manifest {
  const tolerations = [...TOLERATE_ALL, ...(ctx.placement.tolerations ?? [])];
  const nodeSelector = ctx.placement.nodeSelector;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: p.name, namespace: ctx.testNamespace, labels: { ...ctx.labels, ...p.extraLabels } },
    spec: {
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      ...(p.schedulerName ? { schedulerName: p.schedulerName } : {}),
      ...(p.nodeName ? { nodeName: p.nodeName } : {}),
      ...(nodeSelector && Object.keys(nodeSelector).length > 0 ? { nodeSelector: { ...nodeSelector } } : {}),
      tolerations,
      securityContext: PROBE_POD_SECURITY,
      ...(p.claimName ? { resourceClaims: [{ name: GPU_REQUEST, resourceClaimName: p.claimName }] } : {}),
      containers: [
        {
          name: p.container,
          image: ctx.image,
          command: ["aicr"],
          args: p.args,
          securityContext: PROBE_CONTAINER_SECURITY,
          resources: {
            requests: { cpu: "50m", memory: "64Mi" },
            limits: { cpu: "500m", memory: "256Mi" },
            ...(p.claimName ? { claims: [{ name: GPU_REQUEST }] } : {}),
          },
        },
      ],
    },
  };
}

/** A manifest as evidence: the fields an operator reads, one line each. */
export function manifestLines(
  objects: readonly { kind?: string; metadata?: { name?: string; namespace?: string } }[],
): string {
  return objects
    .map((o) => `${o.kind}/${o.metadata?.name} created in namespace ${o.metadata?.namespace}`)
    .join("\n");
}

/** `name node=… driver=… pool=… devices=N`, one line per slice, the total first. */
export function sliceLines(slices: readonly ResourceSlice[]): string {
  const lines = [`Total ResourceSlices: ${slices.length}`];
  for (const s of slices)
    lines.push(
      `${s.metadata?.name ?? "?"}\tnode=${s.spec?.nodeName ?? (s.spec?.allNodes ? "(all nodes)" : "(none)")}\tdriver=${s.spec?.driver ?? "?"}\tpool=${s.spec?.pool?.name ?? "?"}\tdevices=${s.spec?.devices?.length ?? 0}`,
    );
  return lines.join("\n");
}

/** The devices a claim was allocated (`driver/pool/device`), empty when it has none. */
export const allocatedDevices = (claim: ResourceClaim | undefined): string[] =>
  (claim?.status?.allocation?.devices?.results ?? []).map((r) => `${r.driver}/${r.pool}/${r.device}`);

/**
 * A claim for evidence: its allocation while its pod ran (devices, whom it was reserved for), then
 * whether it still exists and holds anything now (the pod ended, the ResourceClaim controller releases it).
 */
export function claimLines(
  name: string,
  whileRunning: ResourceClaim | undefined,
  now: ResourceClaim | undefined | "unread",
): string {
  const devices = allocatedDevices(whileRunning);
  const reserved = (whileRunning?.status?.reservedFor ?? []).map((r) => `${r.resource}/${r.name}`);
  const after =
    now === "unread"
      ? "not read"
      : !now
        ? "not found"
        : now.status?.allocation
          ? `allocated (${allocatedDevices(now).join(", ")}), reservedFor ${(now.status.reservedFor ?? []).map((r) => `${r.resource}/${r.name}`).join(", ") || "(none)"}`
          : "exists, released";
  return [
    `ResourceClaim ${name}`,
    `  allocated while the pod ran: ${whileRunning ? "yes" : "no"}`,
    `  devices: ${devices.length > 0 ? devices.join(", ") : "(none)"}`,
    `  reservedFor: ${reserved.length > 0 ? reserved.join(", ") : "(none)"}`,
    `  after the pod: ${after}`,
  ].join("\n");
}

/**
 * Watches a claim from its create's resourceVersion and keeps its last allocated state: the
 * ResourceClaim controller releases the allocation moments after the pod ends, so a read after the pod
 * would show none. `stop()` ends the watch and returns that state (undefined when none was seen).
 */
export function watchAllocation(
  ctx: Pick<CheckContext, "client" | "signal">,
  namespace: string,
  name: string,
  resourceVersion: string | undefined,
): { stop: () => Promise<ResourceClaim | undefined> } {
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  let allocated: ResourceClaim | undefined;
  const path = `/apis/${DRA_V1}/namespaces/${encodeURIComponent(namespace)}/resourceclaims`;
  const done = ctx.client
    .watch<ResourceClaim>(
      path,
      { fieldSelector: `metadata.name=${name}`, resourceVersion },
      {
        signal,
        onEvent: (e) => {
          if ((e.type === "ADDED" || e.type === "MODIFIED") && e.object.status?.allocation)
            allocated = e.object;
        },
      },
    )
    .catch(() => undefined);
  return {
    stop: async () => {
      stop.abort();
      await done;
      return allocated;
    },
  };
}

/** The exit code of a pod's (first) terminated container. */
export function exitCodeOf(pod: Pod | undefined, container?: string): number | undefined {
  const statuses = pod?.status?.containerStatuses ?? [];
  const s = container ? statuses.find((c) => c.name === container) : statuses[0];
  return s?.state?.terminated?.exitCode ?? s?.lastState?.terminated?.exitCode;
}

/** A pod's state for evidence: phase, node, IP, claim entries, exit code. */
export function podLines(pod: Pod | undefined, name: string): string {
  if (!pod) return `Pod ${name}: not found`;
  const code = exitCodeOf(pod);
  return [
    `Pod ${name}`,
    `  phase: ${pod.status?.phase ?? "Unknown"}`,
    `  node: ${pod.spec?.nodeName ?? "(none)"}`,
    `  podIP: ${pod.status?.podIP ?? "(none)"}`,
    `  resourceClaims: ${pod.spec?.resourceClaims?.length ?? 0}`,
    ...(code !== undefined ? [`  exitCode: ${code}`] : []),
  ].join("\n");
}

class Collector extends Writable {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (e?: Error | null) => void): void {
    // The tail is what matters: keep the last LOG_MAX_BYTES.
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > LOG_MAX_BYTES && this.chunks.length > 1) this.size -= this.chunks.shift()?.length ?? 0;
    done();
  }
  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}

/** The last lines of a container's log, or why it could not be read (never throws). */
export async function podLog(
  ctx: Pick<CheckContext, "client" | "signal">,
  namespace: string,
  pod: string,
  container: string,
): Promise<string> {
  const out = new Collector();
  try {
    await ctx.client.followLog({ namespace, pod, container }, { out, signal: ctx.signal, follow: false });
  } catch (err) {
    return `(the log could not be read: ${err instanceof Error ? err.message : String(err)})`;
  }
  const lines = out.text().trimEnd().split("\n");
  const tail = lines.slice(-LOG_TAIL_LINES).join("\n");
  return tail === "" ? "(empty log)" : tail;
}

/** The last non-empty line of a log (a probe's summary), for a message. */
export const lastLine = (log: string): string =>
  log
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1) ?? "";

/**
 * Deletes what the check created, in the order given, each awaited until it is gone (every 500 ms, up
 * to the original's 30 s cleanup bound) before the next: pods before the claims they hold, so the
 * ResourceClaim controller can lift the reservation and the claim's delete protection. Never throws;
 * what is still there is left to the run's namespace delete. Returns a line per object.
 */
export async function deleteInOrder(
  ctx: Pick<CheckContext, "client" | "sleep" | "now" | "signal" | "waitMs">,
  refs: readonly { ref: ObjectRef; uid?: string | undefined }[],
): Promise<string[]> {
  const lines: string[] = [];
  for (const { ref, uid } of refs) {
    await deleteQuietly(ctx.client, ref, uid);
    // The deadline may have passed: each wait then asks once and leaves the rest to the namespace delete.
    const gone = await pollFor(
      { ...ctx, signal: new AbortController().signal },
      { intervalMs: POD_POLL_MS, maxMs: ctx.signal.aborted ? 0 : ctx.waitMs(CLEANUP_MS) },
      async () => {
        try {
          await ctx.client.get(ref);
          return undefined;
        } catch (err) {
          return isNotFound(err) ? true : undefined;
        }
      },
    ).catch(() => undefined);
    lines.push(`${ref.kind}/${ref.name}: ${gone ? "deleted" : "delete requested, still present"}`);
  }
  return lines;
}

/** One line for the evidence of the cleanup: what went, and that the namespace goes with the run. */
export const cleanupEvidence = (namespace: string, lines: readonly string[]): string =>
  [...lines, `namespace ${namespace}: deleted by the run after the check (UID-pinned)`].join("\n");

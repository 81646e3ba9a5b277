import { quantityValue } from "../core/quantity.ts";
import { type OwnerRef, ownerReference } from "../rbac/objects.ts";
import type { RunNames } from "../run/names.ts";

/** How the agent's pod runs: shared by the run's config (deployer.ts) and the Job builder. */
export interface PodSettings {
  image: string;
  privileged: boolean;
  imagePullSecrets?: string[] | undefined;
  nodeSelector?: Record<string, string> | undefined;
  /** Absent → tolerate every taint. */
  tolerations?: Toleration[] | undefined;
  requireGpu?: boolean | undefined;
  runtimeClassName?: string | undefined;
  os?: string | undefined;
  maxNodesPerEntry?: number | undefined;
  discoverNetwork?: boolean | undefined;
  debug?: boolean | undefined;
  requests?: Record<string, string> | undefined;
  limits?: Record<string, string> | undefined;
  /** The Job's activeDeadlineSeconds (default ACTIVE_DEADLINE_SECONDS); see jobDeadlineSeconds. */
  activeDeadlineSeconds?: number | undefined;
}

/** What the Job needs beyond the run's names; every field already validated by the caller. */
export interface AgentJobInput extends PodSettings {
  names: RunNames;
  namespace: string;
  labels: Record<string, string>;
  runId: string;
  /** The ServiceAccount the pod runs as: the run's own, or an existing one (exact mode). */
  serviceAccountName: string;
  /** `cm://<ns>/<name>` the agent writes. */
  output: string;
  /** True when `output` is the run's staging ConfigMap: the agent then owns it to the Job. */
  outputIsStaging: boolean;
  owner?: OwnerRef | undefined;
}

export interface Toleration {
  key?: string;
  operator: "Exists" | "Equal";
  value?: string;
  effect?: string;
}

export const TTL_AFTER_FINISHED_SECONDS = 3600;
/** A Job built without a caller's timeout (the SDK's AgentRun used directly): 5 h, as the Go original. */
export const ACTIVE_DEADLINE_SECONDS = 18_000;
/** How far a run's Job may outlive the run's own wait: long enough that the wait always decides first. */
export const DEADLINE_GRACE_SECONDS = 60;

/**
 * activeDeadlineSeconds for a Job whose run waits `timeoutMs`: the wait plus a minute's grace, so a
 * killed run's pod is stopped by Kubernetes soon after the run would have given up on it.
 */
export const jobDeadlineSeconds = (timeoutMs: number): number =>
  Math.ceil(timeoutMs / 1000) + DEADLINE_GRACE_SECONDS;
export const GPU_RESOURCE = "nvidia.com/gpu";

const PRIVILEGED_RESOURCES = {
  requests: { cpu: "1", memory: "4Gi", "ephemeral-storage": "2Gi" },
  limits: { cpu: "2", memory: "8Gi", "ephemeral-storage": "4Gi" },
};
const RESTRICTED_RESOURCES = {
  requests: { cpu: "100m", memory: "256Mi", "ephemeral-storage": "256Mi" },
  limits: { cpu: "500m", memory: "512Mi", "ephemeral-storage": "512Mi" },
};

/** Per-key merge: an override wins, unspecified keys keep their default; inputs are not mutated. */
export function mergeResources(
  defaults: Record<string, string>,
  overrides?: Record<string, string>,
): Record<string, string> {
  return { ...defaults, ...(overrides ?? {}) };
}

/**
 * Requests and limits, each merged over its defaults. A request above a *default* limit raises that
 * limit to the request (the apiserver refuses a request above its limit, and the operator asked only
 * for the request); a request above a limit the operator gave is refused earlier, as bad flags.
 */
export function podResources(
  defaults: { requests: Record<string, string>; limits: Record<string, string> },
  input: { requests?: Record<string, string> | undefined; limits?: Record<string, string> | undefined },
): { requests: Record<string, string>; limits: Record<string, string> } {
  const requests = mergeResources(defaults.requests, input.requests);
  const limits = mergeResources(defaults.limits, input.limits);
  for (const [name, qty] of Object.entries(input.requests ?? {})) {
    // own properties only: a name such as constructor (the SDK takes any record) is no limit
    const limit = Object.hasOwn(limits, name) ? limits[name] : undefined;
    if (
      limit !== undefined &&
      !Object.hasOwn(input.limits ?? {}, name) &&
      quantityValue(qty) > quantityValue(limit)
    )
      limits[name] = qty;
  }
  return { requests, limits };
}

const fieldEnv = (name: string, fieldPath: string) => ({
  name,
  valueFrom: { fieldRef: { apiVersion: "v1", fieldPath } },
});

/** The env contract the agent (ours or the Go original's image) reads, in the reference's order. */
export function agentEnv(input: AgentJobInput): Record<string, unknown>[] {
  const env: Record<string, unknown>[] = [
    { name: "AICR_AGENT_MODE", value: "true" },
    { name: "AICR_LOG_PREFIX", value: "agent" },
    fieldEnv("NODE_NAME", "spec.nodeName"),
    { name: "AICR_RUN_ID", value: input.runId },
    fieldEnv("AICR_POD_UID", "metadata.uid"),
    fieldEnv("AICR_JOB_UID", "metadata.labels['batch.kubernetes.io/controller-uid']"),
    fieldEnv("AICR_JOB_NAME", "metadata.labels['batch.kubernetes.io/job-name']"),
  ];
  if (input.outputIsStaging) env.push({ name: "AICR_OUTPUT_OWNED_BY_JOB", value: "true" });
  if (input.maxNodesPerEntry && input.maxNodesPerEntry > 0)
    env.push({ name: "AICR_MAX_NODES_PER_ENTRY", value: String(input.maxNodesPerEntry) });
  if (input.os) env.push({ name: "AICR_OS", value: input.os });
  if (input.discoverNetwork) env.push({ name: "AICR_DISCOVER_NETWORK", value: "true" });
  if (input.runtimeClassName) env.push({ name: "NVIDIA_VISIBLE_DEVICES", value: "all" });
  return env;
}

function privilegedPod(input: AgentJobInput) {
  const { requests, limits } = podResources(PRIVILEGED_RESOURCES, input);
  if (input.requireGpu && !(GPU_RESOURCE in (input.limits ?? {}))) limits[GPU_RESOURCE] = "1";
  const hostMounts =
    input.os === "talos"
      ? []
      : [
          {
            name: "run-systemd",
            hostPath: { path: "/run/systemd", type: "Directory" },
            mountPath: "/run/systemd",
          },
          {
            name: "host-os-release",
            hostPath: { path: "/etc/os-release", type: "File" },
            mountPath: "/etc/os-release",
          },
        ];
  return {
    pod: {
      hostPID: true,
      hostNetwork: true,
      hostIPC: true,
      securityContext: { runAsUser: 0, runAsGroup: 0, fsGroup: 0, fsGroupChangePolicy: "OnRootMismatch" },
    },
    container: {
      resources: { requests, limits },
      securityContext: {
        privileged: true,
        runAsUser: 0,
        runAsGroup: 0,
        allowPrivilegeEscalation: true,
        capabilities: { add: ["SYS_ADMIN", "SYS_CHROOT"] },
      },
    },
    volumes: hostMounts.map((m) => ({ name: m.name, hostPath: m.hostPath })),
    mounts: hostMounts.map((m) => ({ name: m.name, mountPath: m.mountPath, readOnly: true })),
  };
}

function restrictedPod(input: AgentJobInput) {
  const seccompProfile = { type: "RuntimeDefault" };
  return {
    pod: {
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 65534,
        runAsGroup: 65534,
        fsGroup: 65534,
        seccompProfile,
      },
    },
    container: {
      resources: {
        ...podResources(RESTRICTED_RESOURCES, input),
      },
      securityContext: {
        privileged: false,
        runAsNonRoot: true,
        runAsUser: 65534,
        runAsGroup: 65534,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ["ALL"] },
        seccompProfile,
      },
    },
    volumes: [],
    mounts: [],
  };
}

/** The agent Job: pure, deterministic, the same contract as the reference agent image. */
export function buildAgentJob(input: AgentJobInput) {
  const mode = input.privileged ? privilegedPod(input) : restrictedPod(input);
  const args = [...(input.debug ? ["--debug", "--log-json"] : []), "snapshot", "-o", input.output];
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: input.names.job,
      namespace: input.namespace,
      labels: { ...input.labels },
      ...(input.owner ? { ownerReferences: [ownerReference(input.owner)] } : {}),
    },
    spec: {
      completions: 1,
      parallelism: 1,
      completionMode: "NonIndexed",
      backoffLimit: 0,
      ttlSecondsAfterFinished: TTL_AFTER_FINISHED_SECONDS,
      activeDeadlineSeconds: input.activeDeadlineSeconds ?? ACTIVE_DEADLINE_SECONDS,
      template: {
        metadata: { labels: { ...input.labels } },
        spec: {
          serviceAccountName: input.serviceAccountName,
          restartPolicy: "Never",
          ...mode.pod,
          ...(input.nodeSelector && Object.keys(input.nodeSelector).length > 0
            ? { nodeSelector: { ...input.nodeSelector } }
            : {}),
          tolerations: input.tolerations
            ? input.tolerations.map((t) => ({ ...t }))
            : [{ operator: "Exists" }],
          ...(input.imagePullSecrets?.length
            ? { imagePullSecrets: input.imagePullSecrets.map((name) => ({ name })) }
            : {}),
          ...(input.runtimeClassName ? { runtimeClassName: input.runtimeClassName } : {}),
          containers: [
            {
              name: "aicr",
              image: input.image,
              command: ["aicr"],
              args,
              env: agentEnv(input),
              ...mode.container,
              volumeMounts: [{ name: "tmp", mountPath: "/tmp" }, ...mode.mounts],
            },
          ],
          volumes: [{ name: "tmp", emptyDir: {} }, ...mode.volumes],
        },
      },
    },
  };
}

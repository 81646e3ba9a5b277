/**
 * What the process kubelet asks of the apiserver about one pod, as its node: the ConfigMaps of a
 * container's env, the ServiceAccount volume (TokenRequest + kube-root-ca.crt), status patches, events,
 * and the final delete.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { containerEnv } from "../controllers/env.ts";
import { type PodView, renderStatus } from "../controllers/pod-status.ts";
import { SERVICE_ACCOUNT_MOUNT } from "../controllers/process-runtime.ts";
import type { KObject, Store } from "../store.ts";
import { isApiError, type NodeApi, rfc3339 } from "./kubelet-api.ts";

type Spec = KObject["spec"];
export const HOST_IP = "127.0.0.1";
const nsPath = (pod: KObject) => `/api/v1/namespaces/${pod.metadata.namespace}`;

/**
 * A container's env as the kubelet builds it (controllers/env.ts: envFrom, env, fieldRef,
 * configMapKeyRef, $(VAR)), with the ConfigMaps read as the node — the Node authorizer allows those its
 * pods reference — plus KUBERNETES_SERVICE_HOST/PORT. Throws ContainerConfigError for a missing one.
 */
export async function resolveEnv(
  api: NodeApi,
  pod: KObject,
  spec: Spec,
  service: { host: string; port: number },
): Promise<Record<string, string>> {
  const names = new Set<string>([
    ...(spec.envFrom ?? []).flatMap((s: any) => (s.configMapRef ? [s.configMapRef.name] : [])),
    ...(spec.env ?? []).flatMap((e: any) =>
      e.valueFrom?.configMapKeyRef ? [e.valueFrom.configMapKeyRef.name] : [],
    ),
  ]);
  const found = new Map<string, KObject>();
  for (const name of names) {
    try {
      found.set(name, await api.json("GET", `${nsPath(pod)}/configmaps/${name}`));
    } catch (err) {
      if (!isApiError(err, 404)) throw err;
    }
  }
  // containerEnv (the fake kubelet's) only calls store.find(configmaps, namespace, name).
  const configMaps = {
    find: (_r: unknown, _ns: string, name: string) => found.get(name),
  } as unknown as Store;
  const withIPs = { ...pod, status: { ...pod.status, podIP: HOST_IP, hostIP: HOST_IP } };
  return {
    KUBERNETES_SERVICE_HOST: service.host,
    KUBERNETES_SERVICE_PORT: String(service.port),
    ...containerEnv(configMaps, withIPs, spec),
  };
}

/**
 * Lays out the kube-api-access projected volume (which the ServiceAccount admission plugin adds unless
 * automountServiceAccountToken is false) in `<workDir>/<pod uid>`: a bound token from the TokenRequest
 * API, ca.crt from the namespace's kube-root-ca.crt, and the namespace. null when no container mounts it.
 */
export async function serviceAccountVolume(
  api: NodeApi,
  pod: KObject,
  workDir: string,
): Promise<string | null> {
  const { spec, metadata } = pod;
  const mount = [...(spec.initContainers ?? []), ...(spec.containers ?? [])]
    .flatMap((c: Spec) => c.volumeMounts ?? [])
    .find((m: any) => m.mountPath === SERVICE_ACCOUNT_MOUNT);
  const volume = (spec.volumes ?? []).find((v: any) => v.name === mount?.name);
  const source = volume?.projected?.sources?.find((s: any) => s.serviceAccountToken)?.serviceAccountToken;
  if (spec.automountServiceAccountToken === false || !source) return null;
  // Simplification: the token is not refreshed (the real kubelet renews it at 80% of its lifetime).
  const review = await api.json(
    "POST",
    `${nsPath(pod)}/serviceaccounts/${spec.serviceAccountName ?? "default"}/token`,
    {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: {
        audiences: source.audience ? [source.audience] : [], // [] = the apiserver's --api-audiences
        expirationSeconds: source.expirationSeconds ?? 3607,
        boundObjectRef: { kind: "Pod", apiVersion: "v1", name: metadata.name, uid: metadata.uid },
      },
    },
  );
  const rootCa = await api.json("GET", `${nsPath(pod)}/configmaps/kube-root-ca.crt`);
  // Simplification: plain files, not the kubelet's atomic writer (..data symlink swap).
  const dir = join(workDir, metadata.uid!);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "token"), review.status.token, { mode: 0o600 });
  await writeFile(join(dir, "ca.crt"), rootCa.data?.["ca.crt"] ?? "");
  await writeFile(join(dir, "namespace"), metadata.namespace!);
  return dir;
}

const MY_CONDITIONS = new Set(["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"]);

/**
 * Patches pods/<name>/status with the view (strategic merge, metadata.uid as the precondition, as the
 * kubelet's status manager does) and returns the stored status. `live` is the last stored status, whose
 * condition transition times are kept.
 */
export async function patchStatus(
  api: NodeApi,
  pod: KObject,
  view: PodView,
  live: any,
  now: string,
): Promise<any> {
  const s = renderStatus(view, live, now);
  // A strategic merge patch keeps what it does not mention: what must go is sent as null (the kubelet
  // sends the two-way diff of old and new status, which has the same nulls).
  const oneState = (c: any) => ({
    ...c,
    state: { waiting: null, running: null, terminated: null, ...c.state },
  });
  const status = {
    phase: s.phase,
    // Only the kubelet's own conditions: others (PodScheduled, DisruptionTarget) merge by type and stay.
    conditions: s.conditions
      .filter((c: { type: string }) => MY_CONDITIONS.has(c.type))
      .map((c: object) => ({ reason: null, message: null, ...c })),
    hostIP: s.hostIP,
    hostIPs: s.hostIPs,
    podIP: s.podIP,
    podIPs: s.podIPs,
    startTime: s.startTime,
    ...(s.initContainerStatuses ? { initContainerStatuses: s.initContainerStatuses.map(oneState) } : {}),
    containerStatuses: s.containerStatuses.map(oneState),
  };
  const stored = await api.json(
    "PATCH",
    `${nsPath(pod)}/pods/${pod.metadata.name}/status`,
    { metadata: { uid: pod.metadata.uid }, status },
    "application/strategic-merge-patch+json",
  );
  return stored.status;
}

/** The kubelet's last word on a deleted pod: DELETE with grace 0 and a UID precondition. */
export async function confirmDeletion(api: NodeApi, pod: KObject): Promise<void> {
  await api.json("DELETE", `${nsPath(pod)}/pods/${pod.metadata.name}`, {
    apiVersion: "v1",
    kind: "DeleteOptions",
    gracePeriodSeconds: 0,
    preconditions: { uid: pod.metadata.uid },
  });
}

const hex = (bytes: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");

/** A container ID in containerd's form. */
export const containerId = (): string => `containerd://${hex(32)}`;

/** Records a core/v1 Event about the pod, from kubelet/<node>. */
export async function podEvent(
  api: NodeApi,
  pod: KObject,
  type: "Normal" | "Warning",
  reason: string,
  message: string,
  fieldPath?: string,
): Promise<void> {
  const m = pod.metadata;
  const now = rfc3339();
  // Simplification: every event is a new object (count 1); the real recorder aggregates repeats.
  await api.json("POST", `${nsPath(pod)}/events`, {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${m.name}.${hex(8)}`, namespace: m.namespace },
    involvedObject: {
      apiVersion: "v1",
      kind: "Pod",
      namespace: m.namespace,
      name: m.name,
      uid: m.uid,
      ...(fieldPath ? { fieldPath } : {}),
    },
    reason,
    message,
    type,
    source: { component: "kubelet", host: api.nodeName },
    reportingComponent: "kubelet",
    reportingInstance: api.nodeName,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  });
}

/**
 * What the GPU Operator and kgateway stand-ins share beside _host.ts: admin writes by path that can
 * switch a stand-in between variants (create-or-replace, status through its subresource, quiet
 * deletes), Deployments and DaemonSets whose pods the process kubelet keeps running (_cluster.ts) or
 * never starts (an unpullable image), the wait until their controller's status shows either, and the
 * stand-in Deployment the other stand-ins create once and wait for.
 */
import type { KubeClient, KubeObject } from "../../../src/kube/client.ts";
import { until } from "../../support/until.ts";
import { clientCert } from "../certs.ts";
import { ApiStatusError } from "../errors.ts";
import type { KObject } from "../objects.ts";
import { type AdminHttp, adminHttp } from "../real/admin-http.ts";
import { installCrd } from "../real/crds.ts";
import type { TestCluster } from "../testbed.ts";
import { ensure, ensureNamespace } from "./_host.ts";

/** An image whose pull always fails: its pods stay Pending (ImagePullBackOff), never ready. */
export const UNPULLABLE_IMAGE = "registry.invalid/aicr-standin/unpullable:never";

/** `/api/v1/...` or `/apis/<group>/<version>/...` of a collection or an object. */
export function apiPath(apiVersion: string, plural: string, namespace?: string, name?: string): string {
  const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return `${base}${namespace ? `/namespaces/${namespace}` : ""}/${plural}${name ? `/${name}` : ""}`;
}

/** The admin's writes by path (standinApi). */
export interface StandinApi {
  http: AdminHttp;
  get(path: string): Promise<KObject | undefined>;
  /** Creates `obj` in the collection, or replaces the object of that name (its spec, labels, data). */
  put(collection: string, obj: KObject): Promise<KObject>;
  /** Replaces the object's status through its status subresource. */
  setStatus(path: string, status: unknown): Promise<void>;
  /** Deletes the object; NotFound is fine. */
  remove(path: string): Promise<void>;
  ensureNamespace(name: string): Promise<void>;
  installCrd(crd: KObject): Promise<void>;
}

const notFound = (e: unknown) => e instanceof ApiStatusError && e.code === 404;
const conflict = (e: unknown) => e instanceof ApiStatusError && e.code === 409;

/** The cluster's admin (system:masters, a client certificate) through the fault proxy, as kubectl would. */
export function standinApi(cluster: TestCluster): StandinApi {
  if (!cluster.caCert) throw new Error("the stand-ins need a TLS test cluster (the real backend)");
  const http = adminHttp(cluster.url, { ca: cluster.caCert, ...clientCert("admin", ["system:masters"]) });
  const get = async (path: string) => {
    try {
      return (await http.request("GET", path)) as KObject;
    } catch (e) {
      if (notFound(e)) return undefined;
      throw e;
    }
  };
  const api: StandinApi = {
    http,
    get,
    async put(collection, obj) {
      for (;;) {
        try {
          return (await http.request("POST", collection, obj)) as KObject;
        } catch (e) {
          if (!conflict(e)) throw e;
        }
        const live = await get(`${collection}/${obj.metadata.name}`);
        if (!live) continue;
        try {
          return (await http.request("PUT", `${collection}/${obj.metadata.name}`, {
            ...obj,
            metadata: { ...obj.metadata, resourceVersion: live.metadata.resourceVersion },
            ...(live.status ? { status: live.status } : {}),
          })) as KObject;
        } catch (e) {
          if (!conflict(e)) throw e;
        }
      }
    },
    async setStatus(path, status) {
      for (;;) {
        const live = await get(path);
        if (!live) throw new Error(`${path}: not found`);
        try {
          await http.request("PUT", `${path}/status`, { ...live, status });
          return;
        } catch (e) {
          if (!conflict(e)) throw e;
        }
      }
    },
    async remove(path) {
      try {
        await http.request("DELETE", path, {
          apiVersion: "v1",
          kind: "DeleteOptions",
          propagationPolicy: "Background",
        });
      } catch (e) {
        if (!notFound(e)) throw e;
      }
    },
    async ensureNamespace(name) {
      if (!(await get(apiPath("v1", "namespaces", undefined, name))))
        await api.put(apiPath("v1", "namespaces"), {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name },
        });
      // The ServiceAccount admission plugin refuses pods until the namespace's `default` ServiceAccount
      // exists; a Deployment's controller would retry, but a settled namespace keeps the waits short.
      await until(
        () => get(apiPath("v1", "serviceaccounts", name, "default")),
        `the default ServiceAccount of ${name}`,
      );
    },
    installCrd: (crd) => installCrd(http, crd),
  };
  return api;
}

interface WorkloadOptions {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  image: string;
  replicas?: number;
}

const podTemplate = (o: WorkloadOptions) => ({
  metadata: { labels: o.labels },
  spec: {
    terminationGracePeriodSeconds: 0,
    tolerations: [{ operator: "Exists" }],
    containers: [{ name: "main", image: o.image }],
  },
});

/** A one-container Deployment (Recreate: a changed image takes the old pod away first). */
export const deploymentObject = (o: WorkloadOptions): KObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: o.name, namespace: o.namespace, labels: o.labels },
  // Recreate: a changed image takes the old pod away first, so "unavailable" is reached, not surged past.
  spec: {
    replicas: o.replicas ?? 1,
    strategy: { type: "Recreate" },
    selector: { matchLabels: o.labels },
    template: podTemplate(o),
  },
});

/** A one-container DaemonSet on every node, all of its pods replaced at once. */
export const daemonSetObject = (o: WorkloadOptions): KObject => ({
  apiVersion: "apps/v1",
  kind: "DaemonSet",
  metadata: { name: o.name, namespace: o.namespace, labels: o.labels },
  // Every pod replaced at once: a changed image reaches "no pod ready" instead of stalling half-way.
  spec: {
    updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "100%" } },
    selector: { matchLabels: o.labels },
    template: podTemplate(o),
  },
});

interface WorkloadStatus {
  metadata: { generation?: number };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    replicas?: number;
    readyReplicas?: number;
    numberReady?: number;
    desiredNumberScheduled?: number;
    updatedNumberScheduled?: number;
    numberAvailable?: number;
  };
}

/**
 * Waits until the workload's controller has acted on its latest spec and its status says `ready`
 * (every pod of the new template ready) or `unready` (none ready, and no old pod left ready).
 */
export async function untilWorkload(
  api: StandinApi,
  path: string,
  want: "ready" | "unready",
  ms = 60_000,
): Promise<void> {
  await until(
    async () => {
      const o = (await api.get(path)) as (KObject & WorkloadStatus) | undefined;
      if (!o) return false;
      const s = o.status ?? {};
      if ((s.observedGeneration ?? 0) < (o.metadata.generation ?? 1)) return false;
      if (o.kind === "DaemonSet") {
        const desired = s.desiredNumberScheduled ?? 0;
        return want === "ready"
          ? desired > 0 && s.numberReady === desired && s.updatedNumberScheduled === desired
          : desired > 0 && (s.numberReady ?? 0) === 0 && s.updatedNumberScheduled === desired;
      }
      const replicas = o.spec?.replicas ?? 1;
      return want === "ready"
        ? s.availableReplicas === replicas && s.updatedReplicas === replicas && (s.replicas ?? 0) === replicas
        : (s.availableReplicas ?? 0) === 0 && (s.readyReplicas ?? 0) === 0 && s.updatedReplicas === replicas;
    },
    `${path} ${want}`,
    ms,
  );
}

/**
 * A stand-in Deployment of one container (deploymentObject) created unless it exists, and its wait until
 * available (none with `wait: false` or 0 replicas: it exists but is never available).
 */
export async function standinDeployment(
  client: KubeClient,
  o: WorkloadOptions & { wait?: boolean },
): Promise<void> {
  await ensureNamespace(client, o.namespace);
  await ensure(client, deploymentObject(o) as KubeObject);
  if (o.wait === false || o.replicas === 0) return;
  await until(
    async () => {
      const d = await client.get<KObject & WorkloadStatus>({
        apiVersion: "apps/v1",
        kind: "Deployment",
        namespace: o.namespace,
        name: o.name,
      });
      return (d.status?.availableReplicas ?? 0) >= (d.spec?.replicas ?? 1);
    },
    `Deployment ${o.namespace}/${o.name} available`,
    { ms: 90_000, everyMs: 200 },
  );
}

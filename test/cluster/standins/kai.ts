/**
 * A stand-in for NVIDIA's KAI scheduler on the real control plane, for gang-scheduling: the
 * `kai-scheduler` namespace with its seven Deployments (run by the process kubelet until deleted, so
 * their availability is the real controllers' word), the `queues.scheduling.run.ai` and
 * `podgroups.scheduling.run.ai` CRDs with a `default-queue`, and a small gang scheduler in the test
 * process. It schedules the pods whose schedulerName is kai-scheduler the way KAI does for a gang: it
 * waits until `minMember` pods of the PodGroup their `pod-group.scheduling.run.ai/name` label names are
 * pending, then allocates each pod's ResourceClaims from the ResourceSlices of driver gpu.nvidia.com
 * (the claim's delete protection, then `status.allocation` with the devices and node, and
 * `status.reservedFor` the pod, as kube-scheduler's DRA plugin writes them) and binds the pods
 * (pods/binding) together. Needs the DRA driver stand-in (../dra.ts) installed first.
 *
 *   const kai = await installKaiScheduler(cluster());                 // healthy
 *   kai.gang = "staggered"; kai.gapMs = 32_000;                       // past the 30 s window
 *   kai.gang = "onlyOne";                                             // the rest never bound
 *   await installKaiScheduler(cluster(), { unavailable: "binder" });   // a Deployment never available
 *   await kai.stop();
 *
 * Simplifications: no queues' quotas or fair share, no preemption; a pod's claims are allocated on one
 * node that matches its nodeSelector and has enough free devices; the scheduler polls (every 100 ms)
 * rather than watches.
 */
import type { KubeClient, KubeObject } from "../../../src/kube/client.ts";
import { isNotFound } from "../../../src/kube/errors.ts";
import { until } from "../../support/until.ts";
import { DRA_RESOURCES, gpuClaim, NVIDIA_GPU_DRIVER } from "../dra.ts";
import type { KObject } from "../objects.ts";
import { looseCrd } from "../real/crds.ts";
import type { TestCluster } from "../testbed.ts";
import { adminClient, ensure, ensureNamespace } from "./_host.ts";
import { standinApi, standinDeployment } from "./_standin-api.ts";

export const KAI_NS = "kai-scheduler";
export const KAI_SCHEDULER_NAME = "kai-scheduler";
export const KAI_DEPLOYMENT_NAMES = [
  "kai-scheduler-default",
  "admission",
  "binder",
  "kai-operator",
  "pod-grouper",
  "podgroup-controller",
  "queue-controller",
] as const;
export type KaiDeployment = (typeof KAI_DEPLOYMENT_NAMES)[number];
export const KAI_IMAGE_REPOSITORY = "ghcr.io/nvidia/kai-scheduler";
export const KAI_VERSION = "v0.9.3";
export const POD_GROUP_LABEL = "pod-group.scheduling.run.ai/name";
export const DEFAULT_QUEUE = "default-queue";
/** What kube-scheduler's DRA plugin puts on a claim it allocates. */
export const DELETE_PROTECTION = "resource.kubernetes.io/delete-protection";

/**
 * together: a gang's pods are bound one right after the other (healthy). staggered: `gapMs` apart
 * (default 60 s, beyond gang-scheduling's 30 s window). onlyOne: the first pod is bound, the others
 * never are.
 */
export type GangMode = "together" | "staggered" | "onlyOne";

export interface KaiOptions {
  /** Default true. false: nothing at all (no namespace, Deployments, CRDs or scheduler) — KAI absent. */
  installed?: boolean;
  gang?: GangMode;
  gapMs?: number;
  /** One Deployment scaled to zero: it exists, and is never available. */
  unavailable?: KaiDeployment;
  /** Default true. false: the two CRDs are not installed (the Deployments are). */
  crds?: boolean;
}

export interface KaiStandin {
  /** How the next gang is bound (may be changed between tests). */
  gang: GangMode;
  gapMs: number;
  /** Every binding made: pod (ns/name), node, when. */
  readonly bindings: { pod: string; node: string; at: number }[];
  /** Errors the scheduler met (a test may assert there are none). */
  readonly errors: string[];
  stop(): Promise<void>;
}

/** The two CRDs' loose form (looseCrd), at the versions KAI serves. */
const crd = (plural: string, kind: string, version: string, scope: "Namespaced" | "Cluster"): KObject =>
  looseCrd({ group: "scheduling.run.ai", version, plural, kind, scope });

export const QUEUE_CRD = crd("queues", "Queue", "v2", "Cluster");
export const PODGROUP_CRD = crd("podgroups", "PodGroup", "v2alpha2", "Namespaced");

/** Writes a claim's status.allocation as kube-scheduler does (devices, their node), reserved for `pod`. */
async function writeAllocation(
  cluster: TestCluster,
  claim: { namespace: string; name: string },
  node: string,
  results: unknown[],
  pod?: { name: string; uid: string },
): Promise<void> {
  await cluster.store.mutate(
    DRA_RESOURCES.resourceClaims,
    claim.namespace,
    claim.name,
    (c) => ({
      ...c,
      status: {
        ...c.status,
        allocation: {
          devices: { results },
          nodeSelector: {
            nodeSelectorTerms: [{ matchFields: [{ key: "metadata.name", operator: "In", values: [node] }] }],
          },
        },
        ...(pod ? { reservedFor: [{ resource: "pods", name: pod.name, uid: pod.uid }] } : {}),
      },
    }),
    { subresource: "status" },
  );
}

interface Pod {
  metadata: { name: string; namespace: string; uid: string; labels?: Record<string, string> };
  spec: {
    nodeName?: string;
    schedulerName?: string;
    nodeSelector?: Record<string, string>;
    resourceClaims?: { name: string; resourceClaimName?: string }[];
  };
  status?: { phase?: string };
}

interface Claim {
  metadata: { name: string; namespace: string; uid: string; finalizers?: string[] };
  spec?: { devices?: { requests?: { name: string; exactly?: { count?: number } }[] } };
  status?: {
    allocation?: { devices?: { results?: { driver?: string; pool?: string; device?: string }[] } };
    reservedFor?: unknown[];
  };
}

interface Slice {
  spec?: { driver?: string; nodeName?: string; pool?: { name?: string }; devices?: { name?: string }[] };
}

/**
 * Installs the stand-in into a real cluster where the DRA driver stand-in runs (or, with
 * `installed: false`, installs nothing and schedules nothing). Returns once every Deployment but an
 * `unavailable` one is available and the CRDs are served.
 */
export async function installKaiScheduler(cluster: TestCluster, o: KaiOptions = {}): Promise<KaiStandin> {
  const client = adminClient(cluster);
  const bindings: KaiStandin["bindings"] = [];
  const errors: string[] = [];
  if (o.installed === false) {
    client.close();
    return { gang: "together", gapMs: 0, bindings, errors, stop: async () => {} };
  }
  await ensureNamespace(client, KAI_NS);
  if (o.crds !== false) {
    const api = standinApi(cluster);
    await api.installCrd(QUEUE_CRD);
    await api.installCrd(PODGROUP_CRD);
    await ensure(client, {
      apiVersion: "scheduling.run.ai/v2",
      kind: "Queue",
      metadata: { name: DEFAULT_QUEUE },
      spec: { resources: { gpu: { quota: -1, limit: -1, overQuotaWeight: 1 } } },
    });
  }
  // One after another: on a loaded 2-core machine seven at once only queue up in the kubelet.
  for (const name of KAI_DEPLOYMENT_NAMES)
    await standinDeployment(client, {
      namespace: KAI_NS,
      name,
      labels: { app: name, "app.kubernetes.io/part-of": "kai-scheduler" },
      image: `${KAI_IMAGE_REPOSITORY}/${name}:${KAI_VERSION}`,
      ...(o.unavailable === name ? { replicas: 0 } : {}),
    });

  const standin: KaiStandin & { stopped: boolean } = {
    gang: o.gang ?? "together",
    gapMs: o.gapMs ?? 60_000,
    bindings,
    errors,
    stopped: false,
    stop: async () => {
      standin.stopped = true;
      stopSignal.abort();
      await loop;
      client.close();
    },
  };
  const stopSignal = new AbortController();
  const scheduler = new GangScheduler(cluster, client, standin, stopSignal.signal);
  const loop = scheduler.run();
  return standin;
}

class GangScheduler {
  /** Pods this scheduler has bound or is binding (by UID): never twice. */
  private readonly taken = new Set<string>();

  constructor(
    private readonly cluster: TestCluster,
    private readonly client: KubeClient,
    private readonly standin: KaiStandin,
    private readonly signal: AbortSignal,
  ) {}

  async run(): Promise<void> {
    while (!this.signal.aborted) {
      try {
        await this.pass();
      } catch (err) {
        if (!this.signal.aborted) this.standin.errors.push((err as Error).message);
      }
      await this.pause(100);
    }
  }

  /** Waits `ms`, or less when the stand-in stops. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.signal.addEventListener("abort", done, { once: true });
    });
  }

  /** One pass: every gang with enough pending members is scheduled. */
  private async pass(): Promise<void> {
    const pending = (
      await this.client.list<Pod>("v1", "Pod", {
        fieldSelector: `spec.schedulerName=${KAI_SCHEDULER_NAME},spec.nodeName=`,
      })
    ).items.filter((p) => !this.taken.has(p.metadata.uid) && !p.status?.phase?.match(/Succeeded|Failed/));
    const gangs = new Map<string, Pod[]>();
    for (const p of pending) {
      const group = p.metadata.labels?.[POD_GROUP_LABEL];
      const key = group
        ? `${p.metadata.namespace}/${group}`
        : `${p.metadata.namespace}/pod:${p.metadata.name}`;
      gangs.set(key, [...(gangs.get(key) ?? []), p]);
    }
    for (const [key, members] of gangs) {
      const [namespace, group] = key.split("/") as [string, string];
      const minMember = group.startsWith("pod:") ? 1 : await this.minMember(namespace, group);
      if (minMember === undefined || members.length < minMember) continue;
      await this.schedule(members.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)));
    }
  }

  /** The PodGroup's minMember (1 when unset), or undefined while the PodGroup does not exist. */
  private async minMember(namespace: string, name: string): Promise<number | undefined> {
    try {
      const pg = await this.client.get<{ spec?: { minMember?: number } }>({
        apiVersion: "scheduling.run.ai/v2alpha2",
        kind: "PodGroup",
        namespace,
        name,
      });
      return pg.spec?.minMember ?? 1;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private async schedule(gang: Pod[]): Promise<void> {
    for (const p of gang) this.taken.add(p.metadata.uid);
    const mode = this.standin.gang;
    const bound = mode === "onlyOne" ? gang.slice(0, 1) : gang;
    // Every member's place first (the gang fits, or none of it is bound), then the bindings.
    const placed: { pod: Pod; node: string }[] = [];
    try {
      for (const pod of bound) placed.push({ pod, node: await this.allocate(pod) });
    } catch (err) {
      // Tried again on the next pass, as a scheduler retries a gang that does not fit yet.
      for (const p of gang) this.taken.delete(p.metadata.uid);
      throw err;
    }
    for (const [i, { pod, node }] of placed.entries()) {
      if (i > 0 && mode === "staggered") await this.pause(this.standin.gapMs);
      if (this.signal.aborted) return;
      await this.client.create({
        apiVersion: "v1",
        kind: "Binding",
        metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace },
        target: { apiVersion: "v1", kind: "Node", name: node },
      });
      this.standin.bindings.push({
        pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
        node,
        at: Date.now(),
      });
    }
  }

  /** Allocates every claim of the pod on one node, reserved for the pod; returns the node. */
  private async allocate(pod: Pod): Promise<string> {
    const claims: Claim[] = [];
    for (const ref of pod.spec.resourceClaims ?? []) {
      if (!ref.resourceClaimName) continue;
      claims.push(
        await this.client.get<Claim>({
          apiVersion: "resource.k8s.io/v1",
          kind: "ResourceClaim",
          namespace: pod.metadata.namespace,
          name: ref.resourceClaimName,
        }),
      );
    }
    const wanted = claims.map((c) =>
      (c.spec?.devices?.requests ?? []).map((r) => ({ request: r.name, count: r.exactly?.count ?? 1 })),
    );
    const total = wanted.flat().reduce((n, r) => n + r.count, 0);
    const free = await this.freeDevices();
    const nodes = await this.client.list<{ metadata: { name: string; labels?: Record<string, string> } }>(
      "v1",
      "Node",
    );
    const fits = nodes.items.find((n) => {
      const selector = pod.spec.nodeSelector ?? {};
      const matches = Object.entries(selector).every(([k, v]) => n.metadata.labels?.[k] === v);
      return matches && (free.get(n.metadata.name)?.length ?? 0) >= total;
    });
    if (!fits)
      throw new Error(`pod ${pod.metadata.namespace}/${pod.metadata.name}: no node has ${total} free GPUs`);
    const node = fits.metadata.name;
    const devices = [...(free.get(node) ?? [])];
    for (const [i, claim] of claims.entries()) {
      const results = (wanted[i] ?? []).flatMap((r) =>
        devices
          .splice(0, r.count)
          .map((d) => ({ request: r.request, driver: NVIDIA_GPU_DRIVER, pool: d.pool, device: d.device })),
      );
      const { namespace, name } = claim.metadata;
      await this.cluster.store.mutate(DRA_RESOURCES.resourceClaims, namespace, name, (c) => ({
        ...c,
        metadata: {
          ...c.metadata,
          finalizers: [...new Set([...(c.metadata.finalizers ?? []), DELETE_PROTECTION])],
        },
      }));
      await writeAllocation(this.cluster, claim.metadata, node, results, pod.metadata);
    }
    return node;
  }

  /** Each node's devices of driver gpu.nvidia.com that no claim holds. */
  private async freeDevices(): Promise<Map<string, { pool: string; device: string }[]>> {
    const [slices, claims] = await Promise.all([
      this.client.list<Slice>("resource.k8s.io/v1", "ResourceSlice"),
      this.client.list<Claim>("resource.k8s.io/v1", "ResourceClaim"),
    ]);
    const held = new Set(
      claims.items.flatMap((c) =>
        (c.status?.allocation?.devices?.results ?? [])
          .filter((r) => r.driver === NVIDIA_GPU_DRIVER)
          .map((r) => `${r.pool}/${r.device}`),
      ),
    );
    const free = new Map<string, { pool: string; device: string }[]>();
    for (const s of slices.items) {
      if (s.spec?.driver !== NVIDIA_GPU_DRIVER || !s.spec.nodeName) continue;
      const pool = s.spec.pool?.name ?? "";
      for (const d of s.spec.devices ?? []) {
        if (!d.name || held.has(`${pool}/${d.name}`)) continue;
        free.set(s.spec.nodeName, [...(free.get(s.spec.nodeName) ?? []), { pool, device: d.name }]);
      }
    }
    return free;
  }
}

/**
 * Holds `count` GPUs with claims of a namespace of their own (allocated as a scheduler would, reserved
 * for nobody): fewer free GPUs for the gang pre-flight. Returns the release.
 */
export async function holdGpus(cluster: TestCluster, count: number): Promise<() => Promise<void>> {
  const client = adminClient(cluster);
  const namespace = "gpu-hog";
  await ensureNamespace(client, namespace);
  const slices = (await client.list<Slice>("resource.k8s.io/v1", "ResourceSlice")).items.filter(
    (s) => s.spec?.driver === NVIDIA_GPU_DRIVER,
  );
  const devices = slices.flatMap((s) =>
    (s.spec?.devices ?? []).map((d) => ({
      node: s.spec?.nodeName ?? "",
      pool: s.spec?.pool?.name ?? "",
      device: d.name ?? "",
    })),
  );
  const names: string[] = [];
  for (const d of devices.slice(0, count)) {
    const name = `hog-${d.pool}-${d.device}`;
    await ensure(client, gpuClaim(namespace, name) as KubeObject);
    await writeAllocation(cluster, { namespace, name }, d.node, [
      { request: "gpu", driver: NVIDIA_GPU_DRIVER, pool: d.pool, device: d.device },
    ]);
    names.push(name);
  }
  return async () => {
    for (const name of names)
      await client
        .delete({ apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim", namespace, name })
        .catch(() => {});
    await until(
      async () =>
        (await client.list("resource.k8s.io/v1", "ResourceClaim", { namespace })).items.length === 0,
      "the held GPUs' claims gone",
    );
    client.close();
  };
}

/**
 * One cluster interface, two backends. `startTestCluster(backend, options)` gives every suite the same
 * shape — kubeconfig per identity, admin reads and writes (`store`), the request log, faults, nodes,
 * stop — over either:
 *
 *   fake  test/cluster: our apiserver and controllers in this process (fast; every fault injectable)
 *   real  test/control-plane: etcd, kube-apiserver, kube-controller-manager and kube-scheduler built
 *         from Kubernetes' own modules, our process kubelet (real/kubelet.ts), and a fault proxy in
 *         front of the apiserver (real/fault-proxy.ts) that keeps the same log and fault API.
 *
 * Suites run once per backend in BACKENDS (AICR_TEST_BACKENDS=fake,real; default both), the cluster's
 * lifecycle registered by test/support/cluster.ts:
 *
 *   for (const backend of BACKENDS)
 *     describe(`[${backend}] …`, () => { const cluster = useCluster(backend, …); … cluster().store … });
 *
 * `store` reads are synchronous on both (the real backend's is an informer-style mirror) and writes
 * return a promise on the real one: always `await` them. What only the fake has (its clock, its
 * admission hooks, the raw Store) is under `fake`, undefined on the real backend.
 */
import type { ContainerRuntime, RunFunction } from "./controllers/runtime.ts";
import type { Faults } from "./faults.ts";
import type { KObject } from "./objects.ts";
import type { StoreView } from "./real/mirror.ts";
import type { RealNodeSpec, RealNodeStack } from "./real/node/stack.ts";
import type { RequestLog } from "./request-log.ts";
import { type Cluster, startCluster } from "./server.ts";
import type { ApiserverAccess } from "./wiring.ts";

export type Backend = "fake" | "real";

export const BACKENDS: Backend[] = (process.env.AICR_TEST_BACKENDS ?? "fake,real")
  .split(",")
  .map((b) => b.trim())
  .filter((b): b is Backend => b === "fake" || b === "real");

/**
 * Bound for a suite's beforeAll/afterAll that starts or stops a cluster (bun's hook default is 5 s; a
 * real control plane with its kubelet takes several seconds on a loaded 2-core machine).
 */
export const CLUSTER_HOOK_MS = 120_000;

export interface TestClusterOptions {
  /** Fake only (the real apiserver always serves HTTPS). */
  https?: boolean;
  users?: { name: string; groups?: string[] }[];
  /** Nodes, kept Ready by the kubelet of either backend. */
  nodes?: KObject[];
  /** Other objects created at startup, as admin. */
  objects?: { resource: string; object: KObject }[];
  /** false: no Job controller, scheduler, kubelet or garbage collector on the fake; no kubelet on the real one. */
  controllers?: boolean;
  /** The kubelet's container runtime, built once the apiserver's address is known. */
  runtime?: (apiserver: ApiserverAccess) => ContainerRuntime | RunFunction;
  unpullableImages?: string[];
  /**
   * Real backend only: one real node (kubelet, containerd, runc, CNI bridge, a fake GPU device plugin;
   * real/node/README.md) beside the process kubelet's nodes, Ready and untainted before the cluster is
   * handed out, with its registries and images. Needs root and dist/aicr.
   */
  realNode?: RealNodeSpec;
  /** Fake only: the store's clock. */
  now?: () => Date;
}

export interface TestCluster {
  backend: Backend;
  /** What clients connect to: the fake, or the fault proxy in front of the real apiserver. */
  url: string;
  port: number;
  caCert: string | undefined;
  store: StoreView;
  log: RequestLog;
  faults: Faults;
  kubeconfigFor(user: string, opts?: { auth?: "token" | "certificate"; namespace?: string }): string;
  addUser(name: string, groups?: string[]): void;
  connectionsAccepted(): number;
  /** The fake's own handle (its Store, clock, admission hooks); undefined on the real backend. */
  fake: Cluster | undefined;
  /** The kubectl built from the control plane's Kubernetes release (built on first use). */
  kubectl(): Promise<string>;
  /**
   * Real backend with its kubelet only: registers one more process-kubelet Node in the running cluster
   * (a stand-in cluster autoscaler's scale-up); resolves once it is registered, not yet untainted.
   */
  addNode?: ((node: KObject) => Promise<void>) | undefined;
  /** The real node and its registries, when `realNode` was asked for (real backend only). */
  realNode?: RealNodeStack | undefined;
  stop(): Promise<void>;
}

export async function startTestCluster(
  backend: Backend,
  options: TestClusterOptions = {},
): Promise<TestCluster> {
  if (backend === "real") {
    const { startRealCluster } = await import("./real/cluster.ts");
    return startRealCluster(options);
  }
  if (options.realNode)
    throw new Error("realNode needs the real backend (a fake apiserver has no real kubelet to talk to)");
  const cluster = await startCluster({
    ...(options.https ? { https: true } : {}),
    ...(options.users ? { users: options.users } : {}),
    ...(options.now ? { now: options.now } : {}),
    objects: [
      ...(options.nodes ?? []).map((object) => ({ resource: "nodes", object })),
      ...(options.objects ?? []),
    ],
    controllers:
      options.controllers === false
        ? false
        : {
            ...(options.unpullableImages ? { unpullableImages: options.unpullableImages } : {}),
            ...(options.runtime ? { runtimeFactory: options.runtime } : {}),
          },
  });
  return {
    backend,
    url: cluster.url,
    port: cluster.port,
    caCert: cluster.caCert,
    store: cluster.store,
    log: cluster.log,
    faults: cluster.faults,
    kubeconfigFor: (user, opts) => cluster.kubeconfigFor(user, opts),
    addUser: (name, groups) => void cluster.addUser(name, groups),
    connectionsAccepted: () => cluster.connectionsAccepted(),
    fake: cluster,
    kubectl: async () =>
      (await import("../control-plane/build.ts").then((m) => m.controlPlaneBinary())).kubectl,
    stop: () => cluster.stop(),
  };
}

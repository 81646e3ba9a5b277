/**
 * The lifecycle of a test cluster in a bun:test suite. `useCluster(backend, options)` registers the
 * hooks that start the cluster (testbed.ts's startTestCluster, or the suite's own `start`) and stop it,
 * and returns an accessor for the running cluster:
 *
 *   for (const backend of BACKENDS)
 *     describe(`[${backend}] …`, () => {
 *       const cluster = useCluster(backend, { controllers: false });          // one per describe
 *       const fresh = useCluster(backend, { per: "test" });                   // a new one per test
 *       const snap = useCluster(backend, { start: snapshotCluster });         // a harness's cluster
 *       test("…", async () => { await cluster().store.create(…); });
 *     });
 *
 * Registered in the describe (or file) it is called in: beforeAll/afterAll, or beforeEach/afterEach
 * with `per: "test"`. bun runs hooks in the order they were registered, the after hooks too: a hook
 * that needs the cluster (a kubeconfig, seed objects) goes after useCluster; one that must run before
 * the cluster stops (releasing a pod the kubelet would wait for) goes before it. Stopping removes what
 * the cluster made on disk (its kubeconfigs, the kubelet's work directory, the real control plane's
 * directory); a start that outlives its hook's timeout is still stopped. The hooks have explicit
 * bounds (bun's default is 5 s; a real control plane with its kubelet takes 4–7 s, far more on a
 * loaded 2-core machine).
 */
import { afterAll, afterEach, beforeAll, beforeEach } from "bun:test";
import {
  type Backend,
  CLUSTER_HOOK_MS,
  startTestCluster,
  type TestCluster,
  type TestClusterOptions,
} from "../cluster/testbed.ts";

interface Lifecycle {
  /** "suite" (default): one cluster for the describe block; "test": a fresh one for every test. */
  per?: "suite" | "test";
  /** Bound of each hook (default CLUSTER_HOOK_MS). */
  hookMs?: number;
}

export type UseClusterOptions = Lifecycle & TestClusterOptions;
export type UseOwnClusterOptions<C extends TestCluster> = Lifecycle & {
  /** Starts the cluster instead of startTestCluster (e.g. a harness adding nodes, a runtime, fixtures). */
  start: (backend: Backend) => Promise<C>;
};

export function useCluster<C extends TestCluster>(
  backend: Backend,
  options: UseOwnClusterOptions<C>,
): () => C;
export function useCluster(backend: Backend, options?: UseClusterOptions): () => TestCluster;
export function useCluster<C extends TestCluster>(
  backend: Backend,
  options: UseClusterOptions | UseOwnClusterOptions<C> = {},
): () => C {
  const { per = "suite", hookMs = CLUSTER_HOOK_MS, ...rest } = options;
  const start =
    "start" in rest
      ? () => rest.start(backend)
      : () => startTestCluster(backend, rest as TestClusterOptions) as Promise<C>;
  let starting: Promise<C> | undefined;
  let current: C | undefined;
  const up = async () => {
    starting = start();
    current = await starting;
  };
  const down = async () => {
    const pending = starting;
    starting = undefined;
    current = undefined;
    // A start that failed has stopped what it had started; one still running when its hook timed out
    // is awaited here and stopped.
    const cluster = await pending?.catch(() => undefined);
    await cluster?.stop();
  };
  if (per === "test") {
    beforeEach(up, hookMs);
    afterEach(down, hookMs);
  } else {
    beforeAll(up, hookMs);
    afterAll(down, hookMs);
  }
  return () => {
    if (!current)
      throw new Error(
        `no ${backend} cluster: useCluster's ${per === "test" ? "beforeEach" : "beforeAll"} has not started one (or it failed)`,
      );
    return current;
  };
}

/** Test helpers: wait for a store state by subscribing to its changes, with a bound but no sleeps. */
import { untilStore } from "../../support/until.ts";
import { type KObject, resource, Store } from "../store.ts";
import { FakeClock } from "./clock.ts";

/**
 * check()'s first truthy value, re-checked on every store change (test/support/until.ts). The bound
 * stops a stuck test, never part of an assertion.
 */
export const waitFor = <T>(
  store: Store,
  check: () => T | undefined | null | false,
  what = "condition",
  timeoutMs = 15000,
) => untilStore({ store }, check, what, timeoutMs) as Promise<T>;

export const R = {
  ns: resource("namespaces"),
  sa: resource("serviceaccounts"),
  cm: resource("configmaps"),
  pods: resource("pods"),
  nodes: resource("nodes"),
  events: resource("events"),
  jobs: resource("jobs"),
  rc: resource("runtimeclasses"),
  clusterroles: resource("clusterroles"),
};

export function node(
  name: string,
  extra: { labels?: Record<string, string>; taints?: object[]; gpus?: string } = {},
): KObject {
  return {
    metadata: { name, labels: { "kubernetes.io/hostname": name, ...extra.labels } },
    spec: extra.taints ? { taints: extra.taints } : {},
    status: {
      allocatable: {
        cpu: "8",
        memory: "32Gi",
        pods: "110",
        ...(extra.gpus ? { "nvidia.com/gpu": extra.gpus } : {}),
      },
      addresses: [{ type: "InternalIP", address: "192.168.0.10" }],
    },
  };
}

/** A store with namespace `ns` (and its default ServiceAccount) and one CPU node, on a fake clock. */
export function testStore(): { store: Store; clock: FakeClock } {
  const clock = new FakeClock();
  const store = new Store({ now: () => clock.now() });
  store.create(R.ns, { metadata: { name: "ns" } });
  store.create(R.nodes, node("node-1"));
  return { store, clock };
}

export function jobSpec(
  name: string,
  spec: Record<string, unknown> = {},
  podSpec: Record<string, unknown> = {},
): KObject {
  return {
    metadata: { name, namespace: "ns" },
    spec: {
      backoffLimit: 0,
      ...spec,
      template: {
        metadata: { labels: { app: "aicr" } },
        spec: {
          restartPolicy: "Never",
          containers: [{ name: "aicr", image: "aicr:1", command: ["aicr", "run"] }],
          ...podSpec,
        },
      },
    },
  };
}

/** Events about `name`, oldest first. */
export const events = (store: Store, name: string): KObject[] =>
  store
    .list(R.events, { namespace: "ns" })
    .items.filter((e) => e.involvedObject?.name === name)
    .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));

export const condition = (obj: KObject | undefined, type: string) =>
  (obj?.status?.conditions ?? []).find((c: { type: string }) => c.type === type);

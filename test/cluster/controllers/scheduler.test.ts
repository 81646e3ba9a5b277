import { afterEach, describe, expect, test } from "bun:test";
import type { KObject } from "../store.ts";
import { startControllers } from "./index.ts";
import { condition, events, node, R, testStore, waitFor } from "./testing.ts";

let stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.map((s) => s()));
  stops = [];
});

function setup() {
  const { store, clock } = testStore();
  // The kubelet is off: pods stay as the scheduler leaves them, and tests move their phase by hand.
  const c = startControllers(store, { clock, enable: { kubelet: false, jobs: false } });
  stops.push(() => c.stop());
  return { store, clock };
}

const pod = (name: string, spec: Record<string, unknown> = {}): KObject => ({
  metadata: { name, namespace: "ns" },
  spec: { containers: [{ name: "c", image: "aicr:1" }], ...spec },
});
const gpu = (n: string) => [{ name: "c", image: "aicr:1", resources: { limits: { "nvidia.com/gpu": n } } }];
const get = (store: ReturnType<typeof setup>["store"], name: string) => store.find(R.pods, "ns", name);

describe("scheduler", () => {
  test("binds a pod to the node its selector and tolerations allow", async () => {
    const { store } = setup();
    store.create(
      R.nodes,
      node("gpu-1", {
        labels: { "nvidia.com/gpu.present": "true" },
        gpus: "1",
        taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }],
      }),
    );
    store.create(
      R.pods,
      pod("p", {
        nodeSelector: { "nvidia.com/gpu.present": "true" },
        tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
      }),
    );
    const bound = await waitFor(
      store,
      () => condition(get(store, "p"), "PodScheduled")?.status === "True" && get(store, "p"),
      "bound",
    );
    expect(bound.spec.nodeName).toBe("gpu-1");
    const ev = events(store, "p").find((e) => e.reason === "Scheduled");
    expect(ev?.message).toBe("Successfully assigned ns/p to gpu-1");
    expect(ev?.source).toEqual({ component: "default-scheduler" });
  });

  test("unschedulable pods get the condition and a FailedScheduling event, and are retried when a node appears", async () => {
    const { store } = setup();
    store.create(R.pods, pod("p", { nodeSelector: { "nvidia.com/gpu.present": "true" } }));
    const pending = await waitFor(
      store,
      () => condition(get(store, "p"), "PodScheduled"),
      "PodScheduled=False",
    );
    const msg =
      "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";
    expect(pending).toMatchObject({ status: "False", reason: "Unschedulable", message: msg });
    const ev = events(store, "p").find((e) => e.reason === "FailedScheduling");
    expect(ev).toMatchObject({ type: "Warning", message: msg });
    store.create(R.nodes, node("gpu-1", { labels: { "nvidia.com/gpu.present": "true" } }));
    const bound = await waitFor(store, () => get(store, "p")?.spec.nodeName, "bound after node added");
    expect(bound).toBe("gpu-1");
  });

  test("GPUs in use block a second pod until the first finishes", async () => {
    const { store } = setup();
    store.create(R.nodes, node("gpu-1", { gpus: "1" }));
    store.create(R.pods, pod("a", { containers: gpu("1") }));
    await waitFor(store, () => get(store, "a")?.spec.nodeName, "a bound");
    store.create(R.pods, pod("b", { containers: gpu("1") }));
    const c = await waitFor(store, () => condition(get(store, "b"), "PodScheduled"), "b unschedulable");
    expect(c.message).toBe(
      "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
    );
    store.mutate(R.pods, "ns", "a", (p) => ({ ...p, status: { ...p.status, phase: "Succeeded" } }), {
      subresource: "status",
    });
    expect(await waitFor(store, () => get(store, "b")?.spec.nodeName, "b bound")).toBe("gpu-1");
  });

  test("a missing RuntimeClass keeps the pod pending; creating it lets the pod schedule", async () => {
    const { store } = setup();
    store.create(R.pods, pod("p", { runtimeClassName: "nvidia" }));
    const c = await waitFor(store, () => condition(get(store, "p"), "PodScheduled"), "pending");
    expect(c.message).toBe('pod rejected: RuntimeClass "nvidia" not found');
    store.create(R.rc, { metadata: { name: "nvidia" }, handler: "nvidia" });
    expect(await waitFor(store, () => get(store, "p")?.spec.nodeName, "bound")).toBe("node-1");
  });

  test("pods for another scheduler, or already bound, are left alone", async () => {
    const { store } = setup();
    store.create(R.pods, pod("other", { schedulerName: "custom" }));
    store.create(R.pods, pod("pinned", { nodeName: "node-9" }));
    store.create(R.pods, pod("mine"));
    await waitFor(store, () => get(store, "mine")?.spec.nodeName, "mine bound");
    expect(get(store, "other")?.spec.nodeName).toBeUndefined();
    expect(condition(get(store, "other"), "PodScheduled")).toBeUndefined();
    expect(get(store, "pinned")?.spec.nodeName).toBe("node-9");
  });
});

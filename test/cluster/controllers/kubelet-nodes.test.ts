import { afterEach, describe, expect, test } from "bun:test";
import type { KObject } from "../store.ts";
import { startControllers } from "./index.ts";
import { R, testStore, waitFor } from "./testing.ts";

let stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.map((s) => s()));
  stops = [];
});

function setup() {
  const { store, clock } = testStore();
  const c = startControllers(store, { clock, enable: { scheduler: false } });
  stops.push(() => c.stop());
  return { store };
}

const pod = (name: string, nodeName: string): KObject => ({
  metadata: { name, namespace: "ns" },
  spec: { restartPolicy: "Never", nodeName, containers: [{ name: "aicr", image: "aicr:1" }] },
});
const phase = (store: ReturnType<typeof setup>["store"], name: string, want: string) =>
  waitFor(store, () => store.find(R.pods, "ns", name)?.status?.phase === want, `${name} ${want}`);

describe("kubelet and nodes", () => {
  test("a pod bound to a missing node waits until that node exists", async () => {
    const { store } = setup();
    store.create(R.pods, pod("p", "late-node"));
    store.create(R.pods, pod("q", "node-1"));
    await phase(store, "q", "Succeeded");
    expect(store.find(R.pods, "ns", "p")?.status.phase).toBe("Pending");
    expect(store.find(R.pods, "ns", "p")?.status.containerStatuses).toBeUndefined();
    store.create(R.nodes, { metadata: { name: "late-node" }, status: { allocatable: { pods: "10" } } });
    await phase(store, "p", "Succeeded");
  });
});

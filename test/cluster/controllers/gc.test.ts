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
  const c = startControllers(store, { clock, enable: { jobs: false, scheduler: false, kubelet: false } });
  stops.push(() => c.stop());
  return { store };
}

type Ref = NonNullable<KObject["metadata"]["ownerReferences"]>[number];
const ref = (o: KObject, extra: Partial<Ref> = {}): Ref => ({
  apiVersion: o.apiVersion!,
  kind: o.kind!,
  name: o.metadata.name!,
  uid: o.metadata.uid!,
  ...extra,
});
const cm = (name: string, owners: Ref[], finalizers?: string[]): KObject => ({
  metadata: { name, namespace: "ns", ownerReferences: owners, ...(finalizers ? { finalizers } : {}) },
  data: {},
});

describe("garbage collector", () => {
  test("Background: dependents of a deleted owner are deleted", async () => {
    const { store } = setup();
    const owner = store.create(R.cm, cm("owner", []));
    store.create(R.cm, cm("dep", [ref(owner)]));
    store.delete(R.cm, "ns", "owner", { propagationPolicy: "Background" });
    await waitFor(store, () => !store.find(R.cm, "ns", "dep"), "dependent deleted");
  });

  test("a cluster-scoped owner's namespaced dependents are collected too", async () => {
    const { store } = setup();
    const owner = store.create(R.clusterroles, { metadata: { name: "aicr-node-reader-x" }, rules: [] });
    store.create(R.cm, cm("dep", [ref(owner)]));
    store.delete(R.clusterroles, undefined, "aicr-node-reader-x");
    await waitFor(store, () => !store.find(R.cm, "ns", "dep"), "dependent deleted");
  });

  test("Orphan: dependents stay, without the reference; the owner goes", async () => {
    const { store } = setup();
    const owner = store.create(R.cm, cm("owner", []));
    const other = store.create(R.cm, cm("other", []));
    store.create(R.cm, cm("dep", [ref(owner), ref(other)]));
    store.delete(R.cm, "ns", "owner", { propagationPolicy: "Orphan" });
    await waitFor(store, () => !store.find(R.cm, "ns", "owner"), "owner gone");
    expect(store.find(R.cm, "ns", "dep")?.metadata.ownerReferences).toEqual([ref(other)]);
  });

  test("Foreground: the owner waits for blocking dependents, then goes", async () => {
    const { store } = setup();
    const owner = store.create(R.cm, cm("owner", []));
    store.create(R.cm, cm("blocker", [ref(owner, { blockOwnerDeletion: true })], ["example.com/hold"]));
    store.create(R.cm, cm("free", [ref(owner)]));
    store.delete(R.cm, "ns", "owner", { propagationPolicy: "Foreground" });
    const blocker = await waitFor(
      store,
      () => {
        const b = store.find(R.cm, "ns", "blocker");
        return b?.metadata.deletionTimestamp !== undefined && !store.find(R.cm, "ns", "free") ? b : undefined;
      },
      "blocker marked, free gone",
    );
    expect(blocker.metadata.finalizers).toEqual(["example.com/hold"]);
    const waiting = store.find(R.cm, "ns", "owner");
    expect(waiting?.metadata.deletionTimestamp).toBeString();
    expect(waiting?.metadata.finalizers).toEqual(["foregroundDeletion"]);
    store.mutate(R.cm, "ns", "blocker", (o) => ({ ...o, metadata: { ...o.metadata, finalizers: [] } }));
    await waitFor(
      store,
      () => !store.find(R.cm, "ns", "owner") && !store.find(R.cm, "ns", "blocker"),
      "owner gone",
    );
  });

  test("a dependent created with a dangling owner is deleted; one with a live co-owner loses the reference", async () => {
    const { store } = setup();
    const live = store.create(R.cm, cm("live", []));
    const ghost = {
      apiVersion: "v1",
      kind: "ConfigMap",
      name: "ghost",
      uid: "00000000-0000-0000-0000-000000000000",
    };
    store.create(R.cm, cm("orphan", [ghost]));
    store.create(R.cm, cm("shared", [ghost, ref(live)]));
    await waitFor(store, () => !store.find(R.cm, "ns", "orphan"), "orphan deleted");
    await waitFor(
      store,
      () => store.find(R.cm, "ns", "shared")?.metadata.ownerReferences?.length === 1,
      "ref dropped",
    );
  });

  test("an owner replaced under the same name does not keep the old one's dependents", async () => {
    const { store } = setup();
    const first = store.create(R.cm, cm("owner", []));
    store.create(R.cm, cm("dep", [ref(first)]));
    store.delete(R.cm, "ns", "owner", { propagationPolicy: "Orphan" });
    await waitFor(store, () => !store.find(R.cm, "ns", "owner"), "first gone");
    store.create(R.cm, cm("owner", []));
    store.create(R.cm, cm("dep2", [ref(first)]));
    await waitFor(store, () => !store.find(R.cm, "ns", "dep2"), "dep2 deleted (uid mismatch)");
    expect(store.find(R.cm, "ns", "dep")?.metadata.ownerReferences).toEqual([]);
  });
});

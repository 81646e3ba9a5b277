/** Delete propagation end to end: the apiserver's finalizers plus the controllers' garbage collector. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { wireClient } from "./http-client.ts";
import type { KObject } from "./objects.ts";
import { resource } from "./resources.ts";
import { type Cluster, startCluster } from "./server.ts";

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({
    controllers: { enable: { jobs: false, scheduler: false, kubelet: false } },
  });
});
afterAll(() => cluster.stop());

const cm = resource("configmaps");
const cp = resource("clusterpolicies");

/** Resolves when `check` holds, re-testing on every store change. */
function until(check: () => boolean): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve) => {
    const stop = cluster.store.subscribe(() => {
      if (!check()) return;
      stop();
      resolve();
    });
  });
}

function owned(owner: KObject, name: string, extra: Partial<KObject["metadata"]> = {}): KObject {
  const ref = {
    apiVersion: owner.apiVersion!,
    kind: owner.kind!,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
    blockOwnerDeletion: true,
  };
  return { metadata: { name, namespace: "default", ownerReferences: [ref], ...extra } };
}

describe("delete propagation", () => {
  test("Background: namespaced dependents of a cluster-scoped owner are collected", async () => {
    const owner = cluster.store.create(cp, { metadata: { name: "bg" }, spec: {} });
    cluster.store.create(cm, owned(owner, "bg-dep"));
    const res = await wireClient(cluster, "admin").delete("/apis/nvidia.com/v1/clusterpolicies/bg", {
      propagationPolicy: "Background",
    });
    expect(res.status).toBe(200);
    expect(cluster.store.find(cp, undefined, "bg")).toBeUndefined();
    await until(() => !cluster.store.find(cm, "default", "bg-dep"));
  });

  test("Foreground keeps the owner until its blocking dependents are gone", async () => {
    const owner = cluster.store.create(cp, { metadata: { name: "fg" }, spec: {} });
    cluster.store.create(cm, owned(owner, "fg-dep", { finalizers: ["example.com/hold"] }));
    const res = await wireClient(cluster, "admin").delete("/apis/nvidia.com/v1/clusterpolicies/fg", {
      propagationPolicy: "Foreground",
    });
    expect(res.status).toBe(202);
    await until(() => !!cluster.store.find(cm, "default", "fg-dep")?.metadata.deletionTimestamp);
    const held = cluster.store.get(cp, undefined, "fg");
    expect(held.metadata.deletionTimestamp).toBeDefined();
    expect(held.metadata.finalizers).toEqual(["foregroundDeletion"]);
    cluster.store.mutate(cm, "default", "fg-dep", (o) => ({
      ...o,
      metadata: { ...o.metadata, finalizers: [] },
    }));
    await until(() => !cluster.store.find(cp, undefined, "fg"));
  });

  test("Orphan (the batch/v1 default): dependents lose the ownerReference and stay", async () => {
    const job = cluster.store.create(resource("jobs"), {
      metadata: { name: "orphaner", namespace: "default" },
      spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "i:1" }] } } },
    });
    cluster.store.create(cm, owned(job, "orphan-dep"));
    await wireClient(cluster, "admin").delete("/apis/batch/v1/namespaces/default/jobs/orphaner");
    await until(() => !cluster.store.find(resource("jobs"), "default", "orphaner"));
    const dep = cluster.store.get(cm, "default", "orphan-dep");
    expect(dep.metadata.ownerReferences ?? []).toEqual([]);
  });
});

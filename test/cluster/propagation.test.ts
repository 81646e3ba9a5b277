/**
 * Delete propagation end to end, on both backends: the apiserver's finalizers plus the garbage
 * collector (the fake's controllers/gc.ts; kube-controller-manager's on the real control plane).
 */
import { describe, expect, test } from "bun:test";
import { useCluster } from "../support/cluster.ts";
import { untilStore } from "../support/until.ts";
import { wireClient } from "./http-client.ts";
import type { KObject } from "./objects.ts";
import { resource } from "./resources.ts";
import { BACKENDS } from "./testbed.ts";

const cm = resource("configmaps");
/**
 * The cluster-scoped owner: a ClusterRole, as aicr's anchor. (A custom resource would wait on the real
 * garbage collector's discovery resync, every 30 s, before its owners are watched.)
 */
const owners = resource("clusterroles");
const OWNERS = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
/** Waits here end on conditions (the garbage collector's work); this only bounds a hung one. */
const WAIT_MS = 60_000;

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

for (const backend of BACKENDS)
  describe(`[${backend}] delete propagation`, () => {
    const cluster = useCluster(backend);

    /** `check` holds on the cluster's store (the garbage collector works in the background). */
    const until = (check: () => boolean, what: string) =>
      untilStore(cluster(), check, what, WAIT_MS - 10_000);

    test(
      "Background: namespaced dependents of a cluster-scoped owner are collected",
      async () => {
        const owner = await cluster().store.create(owners, { metadata: { name: "bg" }, rules: [] });
        await cluster().store.create(cm, owned(owner, "bg-dep"));
        const res = await wireClient(cluster(), "admin").delete(`${OWNERS}/bg`, {
          propagationPolicy: "Background",
        });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({
          kind: "Status",
          status: "Success",
          details: { name: "bg", kind: "clusterroles" },
        });
        expect((await wireClient(cluster(), "admin").get(`${OWNERS}/bg`)).status).toBe(404);
        await until(() => !cluster().store.find(cm, "default", "bg-dep"), "bg-dep collected");
      },
      WAIT_MS,
    );

    test(
      "Foreground keeps the owner until its blocking dependents are gone",
      async () => {
        const owner = await cluster().store.create(owners, { metadata: { name: "fg" }, rules: [] });
        await cluster().store.create(cm, owned(owner, "fg-dep", { finalizers: ["example.com/hold"] }));
        const res = await wireClient(cluster(), "admin").delete(`${OWNERS}/fg`, {
          propagationPolicy: "Foreground",
        });
        // 200 with the object marked for deletion (202 is only for the deprecated orphanDependents=false).
        expect(res.status).toBe(200);
        expect(res.body.metadata.finalizers).toEqual(["foregroundDeletion"]);
        await until(
          () => !!cluster().store.find(cm, "default", "fg-dep")?.metadata.deletionTimestamp,
          "fg-dep marked for deletion",
        );
        const held = cluster().store.get(owners, undefined, "fg");
        expect(held.metadata.deletionTimestamp).toBeDefined();
        expect(held.metadata.finalizers).toEqual(["foregroundDeletion"]);
        await cluster().store.mutate(cm, "default", "fg-dep", (o) => ({
          ...o,
          metadata: { ...o.metadata, finalizers: [] },
        }));
        await until(() => !cluster().store.find(owners, undefined, "fg"), "the owner fg gone");
      },
      WAIT_MS,
    );

    test(
      "Orphan (the batch/v1 default): dependents lose the ownerReference and stay",
      async () => {
        const job = await cluster().store.create(resource("jobs"), {
          metadata: { name: "orphaner", namespace: "default" },
          spec: {
            suspend: true,
            template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "i:1" }] } },
          },
        });
        await cluster().store.create(cm, owned(job, "orphan-dep"));
        const res = await wireClient(cluster(), "admin").delete(
          "/apis/batch/v1/namespaces/default/jobs/orphaner",
        );
        expect(res.status).toBe(200);
        await until(
          () => !cluster().store.find(resource("jobs"), "default", "orphaner"),
          "the Job orphaner gone",
        );
        await until(
          () =>
            (cluster().store.find(cm, "default", "orphan-dep")?.metadata.ownerReferences ?? []).length === 0,
          "orphan-dep without ownerReferences",
        );
        expect(cluster().store.find(cm, "default", "orphan-dep")).toBeDefined();
      },
      WAIT_MS,
    );
  });

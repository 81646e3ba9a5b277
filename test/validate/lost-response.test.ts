/** A create whose response is lost (the object was stored) is adopted, not mistaken for another run's. */
import { describe, expect, test } from "bun:test";
import { resource } from "../cluster/resources.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import {
  ctrf,
  LONG,
  NS,
  runId,
  SAMPLE_RECIPE,
  SNAPSHOT,
  untilRunGone,
  validate,
  validationCluster,
} from "./_harness.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { hookMs: LONG, start: validationCluster });

    const PATHS = [
      ["ClusterRole", "/apis/rbac.authorization.k8s.io/v1/clusterroles"],
      ["ConfigMap", `/api/v1/namespaces/${NS}/configmaps`],
      ["Job", `/apis/batch/v1/namespaces/${NS}/jobs`],
    ] as const;

    for (const [kind, path] of PATHS) {
      test(
        `the lost response of the ${kind} create: adopted by its invocation labels, the run passes, nothing is left`,
        async () => {
          const id = runId("c0");
          const fault = cluster().faults.add({ method: "POST", path, dropAfterCommit: true });
          const r = await validate(cluster(), ["-r", SAMPLE_RECIPE, "-s", SNAPSHOT, "--run-id", id]);
          expect({ code: r.code, err: r.code ? r.stderr : "" }).toEqual({ code: 0, err: "" });
          expect(fault.fired).toBe(1);
          expect(ctrf(r).summary).toMatchObject({ passed: 8 });
          await untilRunGone(cluster(), NS, id);
        },
        LONG,
      );
    }

    test(
      "a second invocation reusing a run ID refuses the first one's objects and leaves them untouched",
      async () => {
        const id = runId("d0");
        const first = await validate(cluster(), [
          "-r",
          SAMPLE_RECIPE,
          "-s",
          SNAPSHOT,
          "--run-id",
          id,
          "--no-cleanup",
        ]);
        expect(first.code).toBe(0);
        const before = objectsWithUids(id);
        const second = await validate(cluster(), ["-r", SAMPLE_RECIPE, "-s", SNAPSHOT, "--run-id", id]);
        expect(second.code).toBe(8);
        expect(second.stderr).toContain(
          `ClusterRole aicr-validator-${id} already exists under this run's name`,
        );
        expect(objectsWithUids(id)).toEqual(before);
        await cluster().store.delete(resource("clusterroles"), undefined, `aicr-validator-${id}`, {});
        await untilRunGone(cluster(), NS, id);
      },
      LONG,
    );

    function objectsWithUids(id: string): string[] {
      const sel = { labelSelector: `aicr.run/run-id=${id}` };
      return ["clusterroles", "clusterrolebindings"]
        .flatMap((p) => cluster().store.list(resource(p), sel).items)
        .concat(
          ["serviceaccounts", "roles", "rolebindings", "configmaps", "jobs"].flatMap(
            (p) => cluster().store.list(resource(p), { ...sel, namespace: NS }).items,
          ),
        )
        .map((o) => `${o.kind}/${o.metadata.name} ${o.metadata.uid}`)
        .sort();
    }
  });

import { describe, expect, test } from "bun:test";
import { AicrError } from "../../src/core/errors.ts";
import { stagingConfigMapName } from "../../src/run/names.ts";
import { resource } from "../cluster/store.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { untilStore } from "../support/until.ts";
import {
  adminClient,
  agentCluster,
  captureLog,
  driveRun,
  NS,
  newRun,
  TEST_TIMEOUT_MS,
  testRunId,
} from "./_harness.ts";
import { find, haveNamespace, untilRunGone } from "./_store.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });

    test(
      "a foreign ServiceAccount at the run's name fails the run, and cleanup leaves it alone",
      async () => {
        const runId = testRunId("1");
        const run = newRun(adminClient(cluster()), captureLog(), { runId });
        await haveNamespace(cluster(), NS);
        const foreign = await cluster().store.create(resource("serviceaccounts"), {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name: run.plan.names.serviceAccount, namespace: NS },
        });
        // A slow sibling create: deploy must still wait for it before it reports the failure.
        const slow = cluster().faults.add({
          method: "POST",
          path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`,
          latencyMs: 300,
        });
        const err = await run.deploy().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(AicrError);
        slow.remove();
        expect((err as AicrError).code).toBe("INTERNAL");
        expect((err as AicrError).message).toContain(`ServiceAccount ${NS}/${run.plan.names.serviceAccount}`);
        // Deploy returned only after every create it had started settled: nothing lands after cleanup's look.
        expect(run.created.list().map((e) => [e.kind, e.confirmed])).toEqual([
          ["ClusterRole", true],
          ["ClusterRoleBinding", true],
          ["Role", true],
          ["RoleBinding", true],
        ]);
        expect(run.jobUid).toBeUndefined();

        const receipt = await run.cleanup();
        expect(receipt.find((r) => r.kind === "ServiceAccount")).toBeUndefined();
        expect(receipt.filter((r) => r.outcome !== "deleted")).toEqual([]);
        expect(find(cluster(), "serviceaccounts", NS, run.plan.names.serviceAccount)?.metadata.uid).toBe(
          foreign.metadata.uid,
        );
        // The foreign ServiceAccount carries no run label, so nothing of the run remains.
        await untilRunGone(cluster(), NS, runId);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "a Job replaced before the staging sweep: the sweep keeps the ConfigMap and warns",
      async () => {
        const runId = testRunId("2");
        const sink = captureLog();
        const run = newRun(adminClient(cluster()), sink, { runId });
        const staging = stagingConfigMapName(runId);
        try {
          await run.deploy();
          await run.waitForPod(TEST_TIMEOUT_MS);
          expect((await run.waitForCompletion(TEST_TIMEOUT_MS)).succeeded).toBe(true);
          // The run never read its result, so the staging ConfigMap is known only by name.
          const cm = find(cluster(), "configmaps", NS, staging)!;
          expect(cm).toBeDefined();
          // Someone deletes the Job orphaning its dependents (the batch/v1 REST default), then recreates one.
          await cluster().store.delete(resource("jobs"), NS, run.plan.names.job, {
            propagationPolicy: "Orphan",
          });
          await untilStore(
            cluster(),
            () => !find(cluster(), "jobs", NS, run.plan.names.job),
            "the run's Job gone",
          );
          const replacement = await cluster().store.create(resource("jobs"), {
            apiVersion: "batch/v1",
            kind: "Job",
            metadata: { name: run.plan.names.job, namespace: NS },
            spec: {
              template: {
                spec: { restartPolicy: "Never", containers: [{ name: "other", image: "busybox:other" }] },
              },
            },
          });

          const receipt = await run.cleanup();
          expect(receipt.find((r) => r.kind === "Job")).toMatchObject({ outcome: "not-ours" });
          expect(receipt.find((r) => r.kind === "ConfigMap")).toMatchObject({ outcome: "left-behind" });
          const warned = sink.find("cleanup kept the ConfigMap at this run's staging name");
          expect(warned.length).toBe(1);
          // The Job it compared: its name, the UID this run recorded, and the UID standing there now.
          expect(warned[0]).toMatchObject({
            name: staging,
            namespace: NS,
            job: run.plan.names.job,
            jobUID: run.jobUid,
            liveJobUID: replacement.metadata.uid,
          });
          expect(find(cluster(), "configmaps", NS, staging)?.metadata.uid).toBe(cm.metadata.uid);
          expect(find(cluster(), "jobs", NS, run.plan.names.job)?.metadata.uid).toBe(
            replacement.metadata.uid,
          );
        } finally {
          await cluster().store.delete(resource("jobs"), NS, run.plan.names.job, {
            propagationPolicy: "Background",
          });
          await cluster().store.delete(resource("configmaps"), NS, staging, {});
        }
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "a run that never read its result sweeps its staging ConfigMap while its own Job still stands",
      async () => {
        const runId = testRunId("3");
        const run = newRun(adminClient(cluster()), captureLog(), { runId });
        await run.deploy();
        expect((await run.waitForCompletion(TEST_TIMEOUT_MS)).succeeded).toBe(true);
        const receipt = await run.cleanup();
        expect(receipt.find((r) => r.kind === "ConfigMap")).toMatchObject({ outcome: "deleted" });
        await untilRunGone(cluster(), NS, runId);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "a run that did read its result deletes the staging ConfigMap pinned to the UID it read",
      async () => {
        const runId = testRunId("4");
        const run = newRun(adminClient(cluster()), captureLog(), { runId });
        await driveRun(run);
        const uid = find(cluster(), "configmaps", NS, stagingConfigMapName(runId))?.metadata.uid;
        const receipt = await run.cleanup();
        expect(receipt.find((r) => r.kind === "ConfigMap")).toMatchObject({ outcome: "deleted", uid });
        const del = cluster().log.requestsOn(
          `/api/v1/namespaces/${NS}/configmaps/${stagingConfigMapName(runId)}`,
          "DELETE",
        );
        expect(del.map((e) => (e.body as { preconditions?: { uid?: string } }).preconditions?.uid)).toEqual([
          uid,
        ]);
      },
      TEST_TIMEOUT_MS,
    );
  });

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runLabels } from "../../src/run/labels.ts";
import { resource } from "../cluster/store.ts";
import { BACKENDS, CLUSTER_HOOK_MS } from "../cluster/testbed.ts";
import {
  type AgentCluster,
  adminClient,
  agentCluster,
  captureLog,
  collector,
  NS,
  newRun,
  TEST_TIMEOUT_MS,
  testRunId,
} from "./_harness.ts";
import { runObjects, until } from "./_store.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    let cluster: AgentCluster;
    beforeAll(async () => {
      cluster = await agentCluster(backend);
    }, CLUSTER_HOOK_MS);
    afterAll(async () => {
      await cluster.stop();
    }, CLUSTER_HOOK_MS);

    const podsOf = (jobUid: string) =>
      cluster.store
        .list(resource("pods"), { namespace: NS })
        .items.filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === jobUid && r.controller));

    test(
      "an impostor pod with run A's labels, younger, but controlled by run B's Job is never chosen",
      async () => {
        const client = adminClient(cluster);
        const idA = testRunId("a");
        const idB = testRunId("b");
        const a = newRun(client, captureLog(), { runId: idA, invocationId: "inv-a" });
        const b = newRun(client, captureLog(), { runId: idB });
        try {
          await Promise.all([a.deploy(), b.deploy()]);
          await until(cluster, () => podsOf(a.jobUid!).length === 1);
          const real = podsOf(a.jobUid!)[0]!;
          // Strictly younger, so a "youngest pod carrying the run's labels" selector would take it.
          await cluster.advanceClock(5_000);
          const impostor = await cluster.store.create(resource("pods"), {
            apiVersion: "v1",
            kind: "Pod",
            metadata: {
              name: "impostor",
              namespace: NS,
              labels: runLabels({ runId: idA, invocationId: "inv-a" }),
              ownerReferences: [
                {
                  apiVersion: "batch/v1",
                  kind: "Job",
                  name: b.plan.names.job,
                  uid: b.jobUid!,
                  controller: true,
                },
              ],
            },
            spec: {
              nodeName: "gpu-node-1",
              restartPolicy: "Never",
              containers: [{ name: "aicr", image: "busybox:impostor" }],
            },
          });
          expect(Date.parse(impostor.metadata.creationTimestamp!)).toBeGreaterThan(
            Date.parse(real.metadata.creationTimestamp!),
          );
          // It even looks finished: a label-and-age selector would stream its (empty) log as run A's.
          await until(cluster, () => {
            const p = cluster.store.find(resource("pods"), NS, "impostor");
            return p?.status?.phase === "Succeeded";
          });

          const pod = await a.waitForPod(TEST_TIMEOUT_MS);
          expect(pod.metadata.name).toBe(real.metadata.name!);
          const logs = collector();
          await a.streamLogs(pod, logs.out);
          expect(logs.text()).toContain(idA);
          expect((await a.waitForCompletion(TEST_TIMEOUT_MS)).succeeded).toBe(true);
          expect((await a.lastPod())?.metadata.name).toBe(real.metadata.name!);
          // Only pods of A's Job are counted as A's.
          expect(podsOf(a.jobUid!).map((p) => p.metadata.name)).toEqual([real.metadata.name]);
        } finally {
          await Promise.all([a.cleanup(), b.cleanup()]);
        }
        // Not left to B's cleanup: a real Job controller releases a pod its selector does not match.
        // (The garbage collector may take it first, once B's Job is gone: then it is a 404.)
        if (cluster.store.find(resource("pods"), NS, "impostor"))
          await Promise.resolve(cluster.store.delete(resource("pods"), NS, "impostor", {})).catch((e) => {
            if ((e as { code?: number }).code !== 404) throw e;
          });
        await until(
          cluster,
          () => runObjects(cluster, NS, idA).length + runObjects(cluster, NS, idB).length === 0,
        );
      },
      TEST_TIMEOUT_MS,
    );
  });

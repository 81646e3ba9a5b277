import { describe, expect, test } from "bun:test";
import { runLabels } from "../../src/run/labels.ts";
import { resource } from "../cluster/store.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { untilStore } from "../support/until.ts";
import {
  adminClient,
  agentCluster,
  captureLog,
  collector,
  NS,
  newRun,
  TEST_TIMEOUT_MS,
  testRunId,
} from "./_harness.ts";
import { untilRunGone } from "./_store.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });

    const podsOf = (jobUid: string) =>
      cluster()
        .store.list(resource("pods"), { namespace: NS })
        .items.filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === jobUid && r.controller));

    test(
      "an impostor pod with run A's labels, younger, but controlled by run B's Job is never chosen",
      async () => {
        const client = adminClient(cluster());
        const idA = testRunId("a");
        const idB = testRunId("b");
        const a = newRun(client, captureLog(), { runId: idA, invocationId: "inv-a" });
        const b = newRun(client, captureLog(), { runId: idB });
        try {
          await Promise.all([a.deploy(), b.deploy()]);
          await untilStore(cluster(), () => podsOf(a.jobUid!).length === 1, "one pod of the first Job");
          const real = podsOf(a.jobUid!)[0]!;
          // Strictly younger, so a "youngest pod carrying the run's labels" selector would take it.
          await cluster().advanceClock(5_000);
          const impostor = await cluster().store.create(resource("pods"), {
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
          await untilStore(
            cluster(),
            () => cluster().store.find(resource("pods"), NS, "impostor")?.status?.phase === "Succeeded",
            "the impostor pod Succeeded",
          );

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
        if (cluster().store.find(resource("pods"), NS, "impostor"))
          await Promise.resolve(cluster().store.delete(resource("pods"), NS, "impostor", {})).catch((e) => {
            if ((e as { code?: number }).code !== 404) throw e;
          });
        await untilRunGone(cluster(), NS, idA);
        await untilRunGone(cluster(), NS, idB);
      },
      TEST_TIMEOUT_MS,
    );
  });

import { describe, expect, test } from "bun:test";
import type { ReceiptRow } from "../../src/run/cleanup.ts";
import { runLabels } from "../../src/run/labels.ts";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { resource } from "../cluster/store.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { RUN_OBJECT_KINDS } from "../snapshot/_harness.ts";
import { useCluster } from "../support/cluster.ts";
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
import { find, untilRunGone } from "./_store.ts";

const INVOCATION = "inv-lifecycle";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });

    test(
      "one run end to end: deploy, logs, result, cleanup leaves nothing of the run",
      async () => {
        const client = adminClient(cluster());
        let receipt: ReceiptRow[] = [];
        const runId = testRunId("a");
        const run = newRun(client, captureLog(), { runId, invocationId: INVOCATION });
        try {
          const result = await driveRun(run);
          // Every object the controller created (and the pod) carries the five run labels; every dependent
          // of the anchor ClusterRole points at it, non-blocking; the staging ConfigMap is owned by the Job.
          const labels = runLabels({ runId, invocationId: INVOCATION });
          const anchor = find(cluster(), "clusterroles", undefined, run.plan.names.clusterRole)!;
          for (const [plural, name] of [
            ["clusterrolebindings", run.plan.names.clusterRole],
            ["serviceaccounts", run.plan.names.serviceAccount],
            ["roles", run.plan.names.serviceAccount],
            ["rolebindings", run.plan.names.serviceAccount],
            ["jobs", run.plan.names.job],
          ] as const) {
            const o = find(cluster(), plural, plural.startsWith("cluster") ? undefined : NS, name)!;
            expect(o.metadata.labels).toMatchObject(labels);
            expect(o.metadata.ownerReferences).toEqual([
              expect.objectContaining({
                kind: "ClusterRole",
                uid: anchor.metadata.uid,
                blockOwnerDeletion: false,
              }),
            ]);
          }
          expect(anchor.metadata.labels).toMatchObject(labels);
          expect(anchor.metadata.ownerReferences ?? []).toEqual([]);
          const pod = cluster().store.list(resource("pods"), {
            namespace: NS,
            labelSelector: `aicr.run/run-id=${runId}`,
          });
          expect(pod.items.map((p) => p.metadata.labels)).toEqual([expect.objectContaining(labels)]);
          const staging = find(cluster(), "configmaps", NS, run.plan.names.stagingConfigMap)!;
          expect(staging.metadata.ownerReferences).toEqual([
            expect.objectContaining({ kind: "Job", uid: run.jobUid, blockOwnerDeletion: false }),
          ]);
          expect(result.logs).toContain(runId);
          const doc = parseSnapshot(result.bytes, "result");
          expect(doc.metadata["run-id"]).toBe(runId);
          expect(doc.metadata["source-node"]).toBe("gpu-node-1");
          expect(doc.metadata["job-uid"]).toBe(run.jobUid);
        } finally {
          receipt = await run.cleanup();
        }
        expect(receipt.filter((r) => r.outcome !== "deleted")).toEqual([]);
        expect(receipt.map((r) => r.kind).sort()).toEqual([...RUN_OBJECT_KINDS].sort());
        // One wave: a dependent the collector took after its owner's delete is still this cleanup's doing.
        for (const r of receipt.filter((x) => x.detail))
          expect(r.detail).toBe("collected with its owner by the garbage collector");
        await untilRunGone(cluster(), NS, runId);
        // Every delete was pinned to the UID the run recorded for that object.
        const deletes = cluster().log.entries.filter((x) => x.method === "DELETE");
        expect(deletes.length).toBe(7);
        for (const e of deletes) {
          const row = receipt.find(
            (r) => e.path.endsWith(`/${r.name}`) && e.path.includes(`/${r.kind.toLowerCase()}s/`),
          );
          expect((e.body as { preconditions?: { uid?: string } }).preconditions?.uid).toBe(row!.uid!);
        }
      },
      TEST_TIMEOUT_MS,
    );
  });

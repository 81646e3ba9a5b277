import { afterAll, beforeAll, expect, test } from "bun:test";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import {
  type AgentCluster,
  adminClient,
  agentCluster,
  captureLog,
  driveRun,
  NS,
  newRun,
  TEST_TIMEOUT_MS,
  testRunId,
} from "./_harness.ts";
import { runObjects, until } from "./_store.ts";

let cluster: AgentCluster;
beforeAll(async () => {
  cluster = await agentCluster();
});
afterAll(async () => {
  await cluster.stop();
});

test(
  "one run end to end: deploy, logs, result, cleanup leaves nothing of the run",
  async () => {
    const client = adminClient(cluster);
    const runId = testRunId("a");
    const run = newRun(client, captureLog(), { runId });
    try {
      const result = await driveRun(run);
      expect(result.logs).toContain(runId);
      const doc = parseSnapshot(result.bytes, "result");
      expect(doc.metadata["run-id"]).toBe(runId);
      expect(doc.metadata["source-node"]).toBe("gpu-node-1");
      expect(doc.metadata["job-uid"]).toBe(run.jobUid);
    } finally {
      const receipt = await run.cleanup();
      expect(receipt.filter((r) => r.outcome !== "deleted")).toEqual([]);
      expect(receipt.map((r) => r.kind).sort()).toEqual(
        [
          "ClusterRole",
          "ClusterRoleBinding",
          "ConfigMap",
          "Job",
          "Role",
          "RoleBinding",
          "ServiceAccount",
        ].sort(),
      );
      // Dependents first, the anchor last: every delete is this cleanup's, none left to the collector.
      expect(receipt.at(-1)?.kind).toBe("ClusterRole");
    }
    await until(cluster, () => runObjects(cluster, NS, runId).length === 0);
    // Every delete was pinned to the UID the run recorded.
    for (const e of cluster.log.entries.filter((x) => x.method === "DELETE"))
      expect((e.body as { preconditions?: { uid?: string } }).preconditions?.uid).toBeTruthy();
  },
  TEST_TIMEOUT_MS,
);

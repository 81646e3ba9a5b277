import { afterAll, beforeAll, expect, test } from "bun:test";
import { Writable } from "node:stream";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import type { Cluster } from "../cluster/server.ts";
import { adminClient, agentCluster, captureLog, newRun, testRunId } from "./_harness.ts";

let cluster: Cluster;
beforeAll(async () => {
  cluster = await agentCluster();
});
afterAll(async () => {
  await cluster.stop();
});

function collector(): { out: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(Buffer.from(chunk));
      cb();
    },
  });
  return { out, text: () => Buffer.concat(chunks).toString("utf8") };
}

test("one run end to end: deploy, logs, result, cleanup leaves nothing of the run", async () => {
  const client = adminClient(cluster);
  const sink = captureLog();
  const runId = testRunId("a");
  const run = newRun(client, sink, { runId, nodeSelector: { "nvidia.com/gpu.present": "true" } });
  try {
    await run.deploy();
    const pod = await run.waitForPod(60_000);
    const logs = collector();
    await run.streamLogs(pod, logs.out);
    const outcome = await run.waitForCompletion(60_000);
    expect(outcome).toEqual({ succeeded: true });
    expect(logs.text()).toContain(runId);
    const bytes = await run.readResult();
    const doc = parseSnapshot(bytes, "result");
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
  }
});

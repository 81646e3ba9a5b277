import { afterAll, beforeAll, describe, expect, test } from "bun:test";
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

    const HOLD = "aicr.test/hold";

    test(
      "a watch cut after every event and a 410 on resume: both waits still finish",
      async () => {
        const runId = testRunId("7");
        // No node matches until the test says so: both waits are certainly watching when things happen.
        const run = newRun(adminClient(cluster), captureLog(), { runId, nodeSelector: { [HOLD]: runId } });
        const jobs = `/apis/batch/v1/namespaces/${NS}/jobs`;
        const pods = `/api/v1/namespaces/${NS}/pods`;
        const cut = cluster.faults.add({ method: "GET", path: jobs, nth: 0, cutWatchAfterEvents: 1 });
        const gone = cluster.faults.add({ method: "GET", path: pods, count: 2, watchGoneOnResume: true });
        const watches = (path: string) =>
          cluster.log.entries.filter((e) => e.verb === "watch" && e.path === path && e.user === "admin");
        try {
          await run.deploy();
          const podWait = run.waitForPod(TEST_TIMEOUT_MS);
          const jobWait = run.waitForCompletion(TEST_TIMEOUT_MS);
          // Two pod watches answered 410 and the third one open; the Job watch open.
          await cluster.log.waitFor(() => watches(pods).length >= 3 && watches(jobs).length >= 1);
          expect(gone.fired).toBe(2);
          await cluster.store.mutate(resource("nodes"), undefined, "gpu-node-1", (n) => {
            n.metadata.labels = { ...n.metadata.labels, [HOLD]: runId };
            return n;
          });

          const pod = await podWait;
          const logs = collector();
          await run.streamLogs(pod, logs.out);
          expect(logs.text()).toContain(runId);
          expect(await jobWait).toEqual({ succeeded: true });
          expect(cut.fired).toBeGreaterThanOrEqual(1);
          // Every cut watch was followed by a fresh list, then a watch from that list's resourceVersion.
          expect(watches(jobs).length).toBeGreaterThan(cut.fired - 1);
          expect(await run.readResult()).toContain(runId);
        } finally {
          cut.remove();
          gone.remove();
          await run.cleanup();
        }
        await until(cluster, () => runObjects(cluster, NS, runId).length === 0);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "a pod that cannot be scheduled: both TIMEOUTs name the Job's pod and its last known state",
      async () => {
        const runId = testRunId("8");
        const run = newRun(adminClient(cluster), captureLog(), { runId, nodeSelector: { [HOLD]: "never" } });
        try {
          await run.deploy();
          const podsOfRun = () =>
            cluster.store
              .list(resource("pods"), { namespace: NS, labelSelector: `aicr.run/run-id=${runId}` })
              .items.filter((p) =>
                p.status?.conditions?.some((c: { type: string }) => c.type === "PodScheduled"),
              );
          await until(cluster, () => podsOfRun().length === 1);
          const err = await run.waitForPod(1).then(
            () => undefined,
            (e: unknown) => e as { code: string; message: string },
          );
          expect(err?.code).toBe("TIMEOUT");
          expect(err?.message).toContain(podsOfRun()[0]!.metadata.name!);
          expect(err?.message).toContain("not scheduled");
          const jobErr = await run.waitForCompletion(1).then(
            () => undefined,
            (e: unknown) => e as { code: string; message: string },
          );
          expect(jobErr?.code).toBe("TIMEOUT");
          expect(jobErr?.message).toContain(`Job ${NS}/${run.plan.names.job}`);
          expect(jobErr?.message).toContain(`pod ${podsOfRun()[0]!.metadata.name!} is not scheduled`);
        } finally {
          await run.cleanup();
        }
        await until(cluster, () => runObjects(cluster, NS, runId).length === 0);
      },
      TEST_TIMEOUT_MS,
    );
  });

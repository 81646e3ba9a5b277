import { describe, expect, test } from "bun:test";
import { DeadlineExceeded } from "../../src/core/deadline.ts";
import { describePodState } from "../../src/deployer/wait.ts";
import { resource } from "../cluster/store.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { until, untilStore } from "../support/until.ts";
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

    const HOLD = "aicr.test/hold";

    test(
      "a watch cut after every event and a 410 on resume: both waits still finish",
      async () => {
        const runId = testRunId("7");
        // No node matches until the test says so: both waits are certainly watching when things happen.
        const run = newRun(adminClient(cluster()), captureLog(), { runId, nodeSelector: { [HOLD]: runId } });
        const jobs = `/apis/batch/v1/namespaces/${NS}/jobs`;
        const pods = `/api/v1/namespaces/${NS}/pods`;
        const cut = cluster().faults.add({ method: "GET", path: jobs, nth: 0, cutWatchAfterEvents: 1 });
        const gone = cluster().faults.add({ method: "GET", path: pods, count: 2, watchGoneOnResume: true });
        const watches = (path: string) =>
          cluster().log.entries.filter((e) => e.verb === "watch" && e.path === path && e.user === "admin");
        try {
          await run.deploy();
          const podWait = run.waitForPod(TEST_TIMEOUT_MS);
          const jobWait = run.waitForCompletion(TEST_TIMEOUT_MS);
          // Two pod watches answered 410 and the third one open; the Job watch open.
          await until(
            () => watches(pods).length >= 3 && watches(jobs).length >= 1,
            "two pod watches refused (410), a third and the Job watch open",
          );
          expect(gone.fired).toBe(2);
          await cluster().store.mutate(resource("nodes"), undefined, "gpu-node-1", (n) => {
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
        await untilRunGone(cluster(), NS, runId);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "a pod that cannot be scheduled: the waits end with the run's deadline (one TIMEOUT), and the pod's last state says why",
      async () => {
        const runId = testRunId("8");
        const run = newRun(adminClient(cluster()), captureLog(), {
          runId,
          nodeSelector: { [HOLD]: "never" },
        });
        try {
          await run.deploy();
          const podsOfRun = () =>
            cluster()
              .store.list(resource("pods"), { namespace: NS, labelSelector: `aicr.run/run-id=${runId}` })
              .items.filter((p) =>
                p.status?.conditions?.some((c: { type: string }) => c.type === "PodScheduled"),
              );
          await untilStore(cluster(), () => podsOfRun().length === 1, "the run's one pod");
          for (const wait of [() => run.waitForPod(1), () => run.waitForCompletion(1)]) {
            const err = await wait().then(
              () => undefined,
              (e: unknown) => e,
            );
            // The deadline's own error, not one per wait: waits take only a signal.
            expect(err).toBeInstanceOf(DeadlineExceeded);
            expect((err as DeadlineExceeded).message).toBe("the test's wait did not finish within 1ms");
          }
          expect(describePodState(await run.lastPod())).toBe(
            `pod ${podsOfRun()[0]!.metadata.name!} is not scheduled: ${podsOfRun()[0]!.status.conditions.find((c: { type: string }) => c.type === "PodScheduled").message}`,
          );
        } finally {
          await run.cleanup();
        }
        await untilRunGone(cluster(), NS, runId);
      },
      TEST_TIMEOUT_MS,
    );
  });

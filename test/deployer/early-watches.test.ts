/**
 * The run's waits (its pod, its Job's end, the agent's write) are opened while the Job's create is
 * still in flight, from the ServiceAccount create's resourceVersion: a round trip off the critical
 * path. Their events are checked only once the Job's UID is known.
 */
import { describe, expect, test } from "bun:test";
import type { RunWaits } from "../../src/deployer/deployer.ts";
import type { LoggedRequest } from "../cluster/request-log.ts";
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
  type TestRun,
  testRunId,
} from "./_harness.ts";
import { untilRunGone } from "./_store.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });

    const JOBS = `/apis/batch/v1/namespaces/${NS}/jobs`;
    const PODS = `/api/v1/namespaces/${NS}/pods`;
    const CONFIGMAPS = `/api/v1/namespaces/${NS}/configmaps`;

    /** deploy, opening the run's waits when the deployer says they can be (as collectSnapshot does). */
    function deployWithWaits(run: TestRun, timeoutMs = TEST_TIMEOUT_MS) {
      let waits: RunWaits | undefined;
      const stop = new AbortController();
      const deployed = run.deploy({ onWatchable: () => (waits = run.openWaits(timeoutMs, stop.signal)) });
      return { deployed, waits: () => waits, stop: () => stop.abort() };
    }

    const since = (seq: number, path: string) => (e: LoggedRequest) =>
      e.seq > seq && e.user === "admin" && e.path === path;

    test(
      "the pod, Job and result watches are open before the Job's create is answered, and nothing is listed",
      async () => {
        const runId = testRunId("e1");
        const run = newRun(adminClient(cluster()), captureLog(), { runId });
        const start = cluster().log.entries.at(-1)?.seq ?? 0;
        const watching = (path: string) =>
          until(
            () => cluster().log.entries.find((e) => since(start, path)(e) && e.verb === "watch"),
            `a watch of ${path}`,
          );
        // The Job's create is held until all three watches were answered: opened after it, this run never ends.
        const opened = Promise.all([watching(PODS), watching(JOBS), watching(CONFIGMAPS)]);
        const hold = cluster().faults.add({ method: "POST", path: JOBS, holdUntil: opened });
        const d = deployWithWaits(run);
        try {
          await d.deployed;
          const saVersion = cluster().store.find(
            resource("serviceaccounts"),
            NS,
            run.plan.names.serviceAccount,
          )?.metadata.resourceVersion;
          const waits = d.waits();
          if (!waits) throw new Error("onWatchable was not called");
          const pod = await waits.pod;
          const logs = collector();
          await run.streamLogs(pod, logs.out);
          expect(await waits.completion).toEqual({ succeeded: true });
          expect(await run.readResult(await waits.written)).toContain(runId);
          expect(hold.fired).toBe(1);

          for (const path of [PODS, JOBS, CONFIGMAPS]) {
            const mine = cluster().log.entries.filter(since(start, path));
            expect(mine.filter((e) => e.verb === "list")).toEqual([]);
            const watch = mine.find((e) => e.verb === "watch");
            // From a version answered before the Job existed: the watch cannot miss the Job's pods.
            expect(saVersion).toBeDefined();
            expect(watch?.query.resourceVersion).toBe(saVersion);
          }
        } finally {
          hold.remove();
          d.stop();
          await run.cleanup();
        }
        await untilRunGone(cluster(), NS, runId);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "the Job's create answer is lost: events held until the adopted Job's UID is known, then the run's own pod is chosen",
      async () => {
        const runId = testRunId("e2");
        const run = newRun(adminClient(cluster()), captureLog(), { runId });
        const podDone = untilStore(
          cluster(),
          () =>
            cluster()
              .store.list(resource("pods"), { namespace: NS, labelSelector: `aicr.run/run-id=${runId}` })
              .items.some((p) => p.status?.phase === "Succeeded"),
          "the run's pod Succeeded",
        );
        const faults = [
          cluster().faults.add({ method: "POST", path: JOBS, dropAfterCommit: true }),
          // The adopting read waits until the agent has run: every event of the run arrives before its UID.
          cluster().faults.add({ method: "GET", path: `${JOBS}/${run.plan.names.job}`, holdUntil: podDone }),
        ];
        const d = deployWithWaits(run);
        try {
          await d.deployed;
          expect(run.created.find("Job")?.adopted).toBe(true);
          const waits = d.waits();
          if (!waits) throw new Error("onWatchable was not called");
          const pod = await waits.pod;
          expect(pod.metadata.ownerReferences?.find((r) => r.controller)?.uid).toBe(run.jobUid);
          expect(await waits.completion).toEqual({ succeeded: true });
          expect(await run.readResult(await waits.written)).toContain(runId);
          expect(faults.map((f) => f.fired)).toEqual([1, 1]);
        } finally {
          for (const f of faults) f.remove();
          d.stop();
          await run.cleanup();
        }
        await untilRunGone(cluster(), NS, runId);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "the Job's create is refused: the waits opened before it end with that refusal, not at their timeout",
      async () => {
        const runId = testRunId("e3");
        const run = newRun(adminClient(cluster()), captureLog(), { runId });
        const refuse = cluster().faults.add({
          method: "POST",
          path: JOBS,
          status: 422,
          message: "refused by test",
        });
        // Longer than the test's own timeout: a wait that only ended at its timeout fails this test.
        const d = deployWithWaits(run, TEST_TIMEOUT_MS * 2);
        try {
          const err = await d.deployed.then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(err).toBeDefined();
          const waits = d.waits();
          if (!waits) throw new Error("onWatchable was not called");
          for (const w of [waits.pod, waits.completion, waits.written])
            expect(
              await w.then(
                () => undefined,
                (e: unknown) => e,
              ),
            ).toBe(err);
        } finally {
          refuse.remove();
          d.stop();
          await run.cleanup();
        }
        await untilRunGone(cluster(), NS, runId);
      },
      TEST_TIMEOUT_MS,
    );
  });

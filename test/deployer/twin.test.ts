import { beforeAll, describe, expect, test } from "bun:test";
import { AicrError } from "../../src/core/errors.ts";
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
import { runObjects, untilRunGone } from "./_store.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });
    beforeAll(() => {
      // The twin talks as its own user, so the request log tells its requests from the first run's.
      cluster().addUser("twin", ["system:masters"]);
    });

    test(
      "a twin invocation with the same run ID fails on AlreadyExists and its cleanup deletes nothing of the first",
      async () => {
        const runId = testRunId("f");
        const first = newRun(adminClient(cluster()), captureLog(), { runId });
        const twinLog = captureLog();
        const twin = newRun(adminClient(cluster(), "twin"), twinLog, { runId });
        const seq = cluster().log.entries.length;
        let firstReceipt: Awaited<ReturnType<typeof first.cleanup>> = [];
        try {
          const result = await driveRun(first);
          // The seven kinds and the agent's pod (the real backend's mirror may trail the run by a moment).
          await untilStore(
            cluster(),
            () => runObjects(cluster(), NS, runId).length === 8,
            () => `the eight run objects; so far: ${runObjects(cluster(), NS, runId).join(", ")}`,
          );
          const before = runObjects(cluster(), NS, runId);

          const err = await twin.deploy().then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(err).toBeInstanceOf(AicrError);
          const e = err as AicrError;
          expect(e.code).toBe("INTERNAL");
          expect(e.message).toContain(first.plan.names.clusterRole);
          expect(e.message).toContain(runId);
          expect(e.remedy).toContain("run ID");

          const receipt = await twin.cleanup();
          expect(receipt.filter((r) => r.outcome === "deleted")).toEqual([]);
          const twinDeletes = cluster()
            .log.entries.slice(seq)
            .filter((r) => r.user === "twin" && r.method === "DELETE");
          expect(twinDeletes).toEqual([]);
          expect(runObjects(cluster(), NS, runId)).toEqual(before);

          // The first run is untouched: its result is still there and its own cleanup takes everything.
          expect(await first.readResult()).toBe(result.bytes);
        } finally {
          firstReceipt = await first.cleanup();
        }
        expect(firstReceipt.filter((r) => r.outcome !== "deleted")).toEqual([]);
        await untilRunGone(cluster(), NS, runId);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "two invocations racing with one run ID: exactly one owns the run; the loser fails and deletes nothing",
      async () => {
        const runId = testRunId("f");
        const one = newRun(adminClient(cluster()), captureLog(), { runId });
        const two = newRun(adminClient(cluster(), "twin"), captureLog(), { runId });
        const seq = cluster().log.entries.length;
        const settled = await Promise.allSettled([one.deploy(), two.deploy()]);
        expect(settled.map((s) => s.status).sort()).toEqual(["fulfilled", "rejected"]);
        const [winner, loser] = settled[0]!.status === "fulfilled" ? [one, two] : [two, one];
        const failure = settled.find((s): s is PromiseRejectedResult => s.status === "rejected")!.reason;
        expect(failure).toMatchObject({ code: "INTERNAL" });
        // The winner's six objects are answered; on the real backend the store's mirror sees them
        // a moment later, each resource on its own watch. The agent's pod and the ConfigMap it
        // writes are left out of the comparison: they appear whenever the agent gets there, and the
        // loser reports that ConfigMap as left behind (no Job of its own vouches for it).
        const owned = () => runObjects(cluster(), NS, runId).filter((o) => !/^(Pod|ConfigMap)\//.test(o));
        await untilStore(
          cluster(),
          () => owned().length === 6,
          () => `six owned objects; so far: ${owned().length}`,
        );
        const before = owned();
        const receipt = await loser.cleanup();
        expect(receipt.filter((r) => r.outcome === "deleted")).toEqual([]);
        expect(receipt.map((r) => r.kind).filter((k) => k !== "ConfigMap")).toEqual([]);
        const loserUser = loser === two ? "twin" : "admin";
        expect(
          cluster()
            .log.entries.slice(seq)
            .filter((e) => e.user === loserUser && e.method === "DELETE"),
        ).toEqual([]);
        expect(owned()).toEqual(before);
        await winner.waitForCompletion(TEST_TIMEOUT_MS);
        await winner.cleanup();
        await untilRunGone(cluster(), NS, runId);
      },
      TEST_TIMEOUT_MS,
    );
  });

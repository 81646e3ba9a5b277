import { describe, expect, test } from "bun:test";
import { stagingConfigMapName } from "../../src/run/names.ts";
import { BACKENDS } from "../cluster/testbed.ts";
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
import { untilRunGone } from "./_store.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });

    const RBAC = "/apis/rbac.authorization.k8s.io/v1";

    /** Where each kind's create goes; the staging ConfigMap is the agent's server-side apply. */
    const CREATES: { kind: string; method: string; path: (runId: string) => string }[] = [
      { kind: "ClusterRole", method: "POST", path: () => `${RBAC}/clusterroles` },
      { kind: "ClusterRoleBinding", method: "POST", path: () => `${RBAC}/clusterrolebindings` },
      { kind: "ServiceAccount", method: "POST", path: () => `/api/v1/namespaces/${NS}/serviceaccounts` },
      { kind: "Role", method: "POST", path: () => `${RBAC}/namespaces/${NS}/roles` },
      { kind: "RoleBinding", method: "POST", path: () => `${RBAC}/namespaces/${NS}/rolebindings` },
      { kind: "Job", method: "POST", path: () => `/apis/batch/v1/namespaces/${NS}/jobs` },
      {
        kind: "ConfigMap",
        method: "PATCH",
        path: (runId) => `/api/v1/namespaces/${NS}/configmaps/${stagingConfigMapName(runId)}`,
      },
    ];

    for (const c of CREATES) {
      test(
        `a lost ${c.kind} create response: the run adopts or fails, and cleanup leaves nothing behind`,
        async () => {
          const runId = testRunId("d");
          const sink = captureLog();
          const fault = cluster().faults.add({
            method: c.method,
            path: c.path(runId),
            dropAfterCommit: true,
          });
          const run = newRun(adminClient(cluster()), sink, { runId });
          let outcome: "adopted" | "failed";
          try {
            const result = await driveRun(run);
            expect(result.runId).toBe(runId);
            outcome = "adopted";
          } catch (err) {
            outcome = "failed";
            // Only the agent's own write may fail the run: every controller create is retried and adopted.
            expect(c.kind, String(err)).toBe("ConfigMap");
          } finally {
            fault.remove();
          }
          expect(fault.fired).toBe(1);
          if (c.kind !== "ConfigMap") {
            expect(outcome).toBe("adopted");
            expect(sink.find(`adopted ${c.kind}`).length).toBe(1);
            // The retry met the committed object (AlreadyExists) and adopted it: one object, not two.
            const creates = cluster()
              .log.requestsOn(c.path(runId), "POST")
              .filter((e) => e.user === "admin");
            expect(creates.map((e) => e.status).slice(-2)).toEqual([201, 409]);
          }
          const receipt = await run.cleanup();
          expect(receipt.filter((r) => !["deleted", "already-gone"].includes(r.outcome))).toEqual([]);
          await untilRunGone(cluster(), NS, runId);
        },
        TEST_TIMEOUT_MS,
      );
    }

    for (const c of CREATES.filter((x) => ["ClusterRole", "Role", "Job"].includes(x.kind))) {
      test(
        `a lost ${c.kind} create response and every retry refused: the run fails, cleanup proves and deletes the object`,
        async () => {
          const runId = testRunId("e");
          const sink = captureLog();
          const path = c.path(runId);
          const faults = [
            cluster().faults.add({ method: "POST", path, dropAfterCommit: true }),
            cluster().faults.add({
              method: "POST",
              path,
              nth: 2,
              count: 10,
              status: 503,
              retryAfterSeconds: 0,
            }),
          ];
          const run = newRun(adminClient(cluster()), sink, { runId });
          try {
            await expect(run.deploy()).rejects.toMatchObject({ code: "SERVICE_UNAVAILABLE" });
          } finally {
            for (const f of faults) f.remove();
          }
          expect(faults[1]!.fired).toBeGreaterThan(0);
          // The object was committed by the first request, but the run never learned its UID.
          const entry = run.created.list().find((e) => e.kind === c.kind);
          expect(entry?.confirmed).toBe(false);
          const receipt = await run.cleanup();
          expect(receipt.find((r) => r.kind === c.kind)).toMatchObject({ outcome: "deleted" });
          expect(receipt.filter((r) => !["deleted", "already-gone"].includes(r.outcome))).toEqual([]);
          await untilRunGone(cluster(), NS, runId);
        },
        TEST_TIMEOUT_MS,
      );
    }

    for (const [status, what] of [
      [500, "once (retried, then adopted)"],
      [403, "for good (the run fails, the intent is kept)"],
    ] as const) {
      test(
        `a lost ClusterRole create response whose adoption read fails ${what}: cleanup still removes it`,
        async () => {
          const runId = testRunId("g");
          const run = newRun(adminClient(cluster()), captureLog(), { runId });
          const name = run.plan.names.clusterRole;
          const faults = [
            cluster().faults.add({ method: "POST", path: CREATES[0]!.path(runId), dropAfterCommit: true }),
            cluster().faults.add({
              method: "GET",
              path: `${RBAC}/clusterroles/${name}`,
              status,
              count: status === 500 ? 1 : 100,
            }),
          ];
          try {
            const err = await run.deploy().then(
              () => undefined,
              (e: unknown) => e as { code: string; message: string },
            );
            if (status === 500) expect(err).toBeUndefined();
            else {
              // Not "created by another invocation": the run could not tell, and must not claim it.
              expect(err?.code).toBe("UNAUTHORIZED");
              expect(err?.message).not.toContain("was not created by this invocation");
              expect(run.created.list()).toEqual([
                expect.objectContaining({ kind: "ClusterRole", confirmed: false }),
              ]);
            }
          } finally {
            for (const f of faults) f.remove();
          }
          const receipt = await run.cleanup();
          expect(receipt.find((r) => r.kind === "ClusterRole")).toMatchObject({ outcome: "deleted" });
          expect(receipt.filter((r) => r.outcome !== "deleted")).toEqual([]);
          await untilRunGone(cluster(), NS, runId);
        },
        TEST_TIMEOUT_MS,
      );
    }
  });

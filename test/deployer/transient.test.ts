import { describe, expect, test } from "bun:test";
import { resource } from "../cluster/store.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import {
  adminClient,
  agentCluster,
  captureLog,
  driveRun,
  newRun,
  TEST_TIMEOUT_MS,
  testRunId,
} from "./_harness.ts";
import { find, untilRunGone } from "./_store.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });

    const MANAGED_BY = "app.kubernetes.io/managed-by";

    test(
      "a 503 with Retry-After and a 429 on creates are retried, and the run succeeds",
      async () => {
        const runId = testRunId("f");
        const ns = "aicr-transient";
        const sink = captureLog();
        const faults = [
          cluster().faults.add({
            method: "POST",
            path: "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            status: 503,
            retryAfterSeconds: 1,
          }),
          cluster().faults.add({
            method: "POST",
            path: `/api/v1/namespaces/${ns}/serviceaccounts`,
            status: 429,
          }),
          cluster().faults.add({ method: "POST", path: `/apis/batch/v1/namespaces/${ns}/jobs`, status: 500 }),
        ];
        const run = newRun(adminClient(cluster()), sink, { runId, namespace: ns });
        const seq = cluster().log.entries.length;
        let receipt: Awaited<ReturnType<typeof run.cleanup>> = [];
        try {
          const result = await driveRun(run);
          expect(result.runId).toBe(runId);
          for (const f of faults) expect(f.fired).toBe(1);
          expect(sink.find("failed transiently; retrying").length).toBe(3);
          // Each retried create answered once with the fault, then 201: one object each.
          for (const path of faults.map((f) => String(f.rule.path)))
            expect(
              cluster()
                .log.entries.slice(seq)
                .filter((e) => e.method === "POST" && e.path === path)
                .map((e) => e.status),
            ).toEqual([faults.find((f) => f.rule.path === path)!.rule.status!, 201]);
        } finally {
          for (const f of faults) f.remove();
          receipt = await run.cleanup();
        }
        expect(receipt.filter((r) => r.outcome !== "deleted")).toEqual([]);
        await untilRunGone(cluster(), ns, runId);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "a missing namespace is created with the managed-by label and never deleted",
      async () => {
        const ns = "aicr-fresh";
        const runId = testRunId("0");
        expect(find(cluster(), "namespaces", undefined, ns)).toBeUndefined();
        const run = newRun(adminClient(cluster()), captureLog(), { runId, namespace: ns });
        try {
          await driveRun(run);
          expect(find(cluster(), "namespaces", undefined, ns)?.metadata.labels?.[MANAGED_BY]).toBe("aicr");
        } finally {
          await run.cleanup();
        }
        await untilRunGone(cluster(), ns, runId);
        expect(find(cluster(), "namespaces", undefined, ns)).toBeDefined();
        expect(cluster().log.requestsOn(`/api/v1/namespaces/${ns}`, "DELETE")).toEqual([]);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "an existing namespace gets the managed-by label patched on, keeps its own labels, and is never deleted",
      async () => {
        const ns = "team-gpu";
        const created = await cluster().store.create(resource("namespaces"), {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: ns, labels: { "pod-security.kubernetes.io/enforce": "privileged" } },
        });
        const runId = testRunId("1");
        const run = newRun(adminClient(cluster()), captureLog(), { runId, namespace: ns });
        try {
          await run.deploy();
          const live = find(cluster(), "namespaces", undefined, ns)!;
          expect(live.metadata.uid).toBe(created.metadata.uid);
          expect(live.metadata.labels?.[MANAGED_BY]).toBe("aicr");
          expect(live.metadata.labels?.["pod-security.kubernetes.io/enforce"]).toBe("privileged");
          expect(cluster().log.requestsOn(`/api/v1/namespaces/${ns}`, "PATCH").length).toBe(1);
        } finally {
          await run.cleanup();
        }
        await untilRunGone(cluster(), ns, runId);
        expect(find(cluster(), "namespaces", undefined, ns)?.metadata.uid).toBe(created.metadata.uid);
        // A second run finds the label in place and patches nothing.
        const again = newRun(adminClient(cluster()), captureLog(), { runId: testRunId("2"), namespace: ns });
        try {
          await again.deploy();
          expect(cluster().log.requestsOn(`/api/v1/namespaces/${ns}`, "PATCH").length).toBe(1);
        } finally {
          await again.cleanup();
        }
      },
      TEST_TIMEOUT_MS,
    );
  });

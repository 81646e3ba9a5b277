import { beforeAll, describe, expect, test } from "bun:test";
import { AicrError } from "../../src/core/errors.ts";
import { resource } from "../cluster/store.ts";
import { BACKENDS, CLUSTER_HOOK_MS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { rejection } from "../support/reject.ts";
import { until } from "../support/until.ts";
import { adminClient, agentCluster, captureLog, NS, newRun, TEST_TIMEOUT_MS, testRunId } from "./_harness.ts";
import { haveNamespace, untilRunGone } from "./_store.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });
    beforeAll(async () => {
      await haveNamespace(cluster(), NS);
    }, CLUSTER_HOOK_MS);

    async function putConfigMap(name: string, data: Record<string, string>) {
      return await cluster().store.create(resource("configmaps"), {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: NS },
        data,
      });
    }

    test("the result is the snapshot.yaml bytes unchanged; a delivered ConfigMap is never recorded", async () => {
      const bytes = "apiVersion: aicr.run/v1\nkind: Snapshot\n# trailing spaces kept   \n";
      await putConfigMap("delivered-ok", { "snapshot.yaml": bytes, format: "yaml" });
      const run = newRun(adminClient(cluster()), captureLog(), {
        runId: testRunId("r"),
        delivered: { namespace: NS, name: "delivered-ok" },
      });
      expect(await run.readResult()).toBe(bytes);
      expect(run.created.list()).toEqual([]);
      expect(await run.cleanup()).toEqual([]);
    });

    test("a ConfigMap without snapshot.yaml → NOT_FOUND naming the key", async () => {
      await putConfigMap("delivered-nokey", { "snapshot.json": "{}" });
      const run = newRun(adminClient(cluster()), captureLog(), {
        runId: testRunId("s"),
        delivered: { namespace: NS, name: "delivered-nokey" },
      });
      const err = await rejection(run.readResult());
      expect(err).toBeInstanceOf(AicrError);
      expect(err?.code).toBe("NOT_FOUND");
      expect(err?.message).toContain('"snapshot.yaml"');
    });

    test("no ConfigMap at all → NOT_FOUND naming it", async () => {
      const run = newRun(adminClient(cluster()), captureLog(), {
        runId: testRunId("t"),
        delivered: { namespace: NS, name: "never-written" },
      });
      const err = await rejection(run.readResult());
      expect(err?.code).toBe("NOT_FOUND");
      expect(err?.message).toContain(`${NS}/never-written`);
    });

    test(
      "cancelled while waiting (SIGINT): the wait ends CANCELED and cleanup still removes the run",
      async () => {
        const runId = testRunId("u");
        const controller = new AbortController();
        const run = newRun(adminClient(cluster()), captureLog(), {
          runId,
          signal: controller.signal,
          nodeSelector: { "aicr.test/hold": "never" },
        });
        await run.deploy();
        const waiting = rejection(run.waitForPod(TEST_TIMEOUT_MS));
        await until(
          () =>
            cluster().log.entries.find(
              (e) => e.verb === "watch" && e.path.endsWith("/pods") && e.user === "admin",
            ),
          "the pod watch open",
        );
        controller.abort(new AicrError("CANCELED", "cancelled by SIGINT"));
        expect((await waiting)?.code).toBe("CANCELED");
        const receipt = await run.cleanup();
        expect(receipt.filter((r) => r.outcome !== "deleted")).toEqual([]);
        await untilRunGone(cluster(), NS, runId);
      },
      TEST_TIMEOUT_MS,
    );
  });

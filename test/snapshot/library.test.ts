/**
 * The library surface (src/index.ts) as an SDK user calls it: typed options with the CLI's defaults,
 * no flag strings, a silent default logger, and the same run isolation as the CLI.
 */
import { describe, expect, test } from "bun:test";
import { AicrError, collectSnapshot, KubeClient } from "../../src/index.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import {
  AGENT_IMAGE,
  freshNamespace,
  jobDeadlinesSince,
  lastSeq,
  RUN_OBJECT_KINDS,
  snapshotCluster,
  TEST_MS,
  untilNoRunObjects,
} from "./_harness.ts";

for (const backend of BACKENDS)
  describe(`[${backend}] collectSnapshot (the SDK entry)`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    const client = () => KubeClient.connect({ kubeconfig: cluster().kubeconfigFor("admin"), env: {} });

    test(
      "namespace and image only: the defaults apply (5m deadline → the Job's 360 s, cleanup on), the result is checked and nothing is left",
      async () => {
        const ns = await freshNamespace(cluster(), "sdk-defaults");
        const since = lastSeq(cluster());
        const result = await collectSnapshot({ client: client(), namespace: ns, image: AGENT_IMAGE });
        expect(result.document.metadata["run-id"]).toBe(result.runId);
        expect(result.content.startsWith("apiVersion:")).toBe(true);
        expect(result.kept).toEqual([]);
        expect(result.receipt.filter((r) => r.outcome === "deleted").length).toBeGreaterThanOrEqual(6);
        expect(jobDeadlinesSince(cluster(), ns, since)).toEqual([360]);
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "cleanup: false keeps the run's objects and lists them (the caller removes them)",
      async () => {
        const ns = await freshNamespace(cluster(), "sdk-kept");
        const result = await collectSnapshot({
          client: client(),
          namespace: ns,
          image: AGENT_IMAGE,
          cleanup: false,
          timeoutMs: 60_000,
        });
        expect(result.receipt).toEqual([]);
        expect(result.kept.map((k) => k.kind).sort()).toEqual([...RUN_OBJECT_KINDS].sort());
        const anchor = result.kept.find((k) => k.kind === "ClusterRole");
        await client().delete(
          { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name: anchor?.name ?? "" },
          { propagationPolicy: "Foreground" },
        );
        await untilNoRunObjects(cluster(), ns, result.runId);
      },
      TEST_MS,
    );

    test("a timeout that is not a positive number (or is above the longest timer) is refused before any request", async () => {
      const before = lastSeq(cluster());
      for (const timeoutMs of [0, -1, Number.NaN, 2 ** 31]) {
        const err = await collectSnapshot({ client: client(), namespace: "sdk-bad", timeoutMs }).catch(
          (e) => e,
        );
        expect(err).toBeInstanceOf(AicrError);
        expect((err as AicrError).code).toBe("INVALID_REQUEST");
      }
      expect(lastSeq(cluster())).toBe(before);
    });
  });

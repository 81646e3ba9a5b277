/**
 * The fleet's two bounds through collectFleet on the fake cluster: --node-timeout ends one node's wait
 * (the others go on), and --timeout ends the whole run — every node without its result is recorded as
 * timed out, the report still comes back, and cleanup takes everything. Three nodes run the instant
 * agent; one never finishes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { KubeClient } from "../../src/kube/client.ts";
import { collectFleet } from "../../src/remote/fleet.ts";
import type { RunContext } from "../cluster/controllers/runtime.ts";
import { node } from "../cluster/nodes.ts";
import { startTestCluster } from "../cluster/testbed.ts";
import { ROOT } from "../e2e/_aicr.ts";
import { instantAgent } from "../support/instant-agent.ts";
import { type Cluster, freshNamespace, SETUP_MS, TEST_MS, untilNoRunObjects } from "./_harness.ts";

const NODES = ["gpu-a", "gpu-b", "gpu-c", "gpu-stuck"];
let cluster: Cluster;

beforeAll(async () => {
  // The instant agent writes this document with the run's ID put in place of the template's.
  const template = (await readFile(join(ROOT, "test/fixtures/diff/baseline.yaml"), "utf8")).replace(
    /run-id: .*/,
    "run-id: 20260101-000000-0000000000000000",
  );
  let self: Cluster | undefined;
  cluster = await startTestCluster("fake", {
    nodes: NODES.map((n) => node(n, { gpus: 8 })),
    runtime: () => {
      const instant = instantAgent(() => self as Cluster, template);
      return {
        run: (ctx: RunContext) => {
          if ((ctx.pod.spec as { nodeName?: string }).nodeName !== "gpu-stuck") return instant(ctx);
          // Runs until its pod is deleted (cleanup), as a hung agent would.
          return new Promise((resolve) =>
            ctx.signal.addEventListener("abort", () => resolve({ exitCode: 137 }), { once: true }),
          );
        },
      };
    },
  });
  self = cluster;
}, SETUP_MS);
afterAll(() => cluster?.stop());

const client = () => KubeClient.connect({ kubeconfig: cluster.kubeconfigFor("admin"), env: {} });

describe("[fake] a fleet's bounds", () => {
  test(
    "--node-timeout ends the stuck node's wait; the others are captured; nothing left",
    async () => {
      const ns = await freshNamespace(cluster, "fleet-node-timeout");
      const result = await collectFleet({
        client: client(),
        namespace: ns,
        timeoutMs: 120_000,
        nodeTimeoutMs: 1_000,
      });
      const byNode = Object.fromEntries(result.report.results.map((r) => [r.node, r]));
      expect(result.report.ok).toBe(3);
      expect(byNode["gpu-stuck"]?.status).toBe("failed");
      expect(byNode["gpu-stuck"]?.error?.code).toBe("TIMEOUT");
      expect(byNode["gpu-stuck"]?.error?.message).toMatch(
        /^the agent on node gpu-stuck did not finish within --node-timeout 1s: /,
      );
      await untilNoRunObjects(cluster, ns);
    },
    TEST_MS,
  );

  test(
    "--timeout ends the run: the nodes without a result are recorded as timed out, the report comes back",
    async () => {
      const ns = await freshNamespace(cluster, "fleet-run-timeout");
      const result = await collectFleet({
        client: client(),
        namespace: ns,
        // Long enough for three instant agents on a loaded machine; the stuck one never finishes.
        timeoutMs: 10_000,
      });
      const byNode = Object.fromEntries(result.report.results.map((r) => [r.node, r]));
      expect(result.report.ok).toBe(3);
      expect(byNode["gpu-stuck"]?.error?.code).toBe("TIMEOUT");
      expect(byNode["gpu-stuck"]?.error?.message).toMatch(
        /^the fleet did not finish within --timeout 10s: node gpu-stuck: /,
      );
      expect(result.receipt.length).toBeGreaterThan(0);
      await untilNoRunObjects(cluster, ns);
    },
    TEST_MS,
  );
});

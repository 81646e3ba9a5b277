import { describe, expect, test } from "bun:test";
import type { AccessCheck, KubeClient } from "../../src/kube/client.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import {
  adminClient,
  agentCluster,
  captureLog,
  driveRun,
  NS,
  newRun,
  serviceAccountSubject,
  TEST_TIMEOUT_MS,
  type TestRun,
  testRunId,
} from "./_harness.ts";
import { runObjects, untilRunGone } from "./_store.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });

    const EXEC: AccessCheck = {
      verb: "create",
      group: "",
      resource: "pods",
      subresource: "exec",
      namespace: NS,
    };
    const PATCH_NODES: AccessCheck = { verb: "patch", group: "", resource: "nodes" };
    const LIST_NODES: AccessCheck = { verb: "list", group: "", resource: "nodes" };
    const LIST_NIC_DEVICES: AccessCheck = {
      verb: "list",
      group: "configuration.net.nvidia.com",
      resource: "nicdevices",
    };
    const WRITE_CM: AccessCheck = { verb: "create", group: "", resource: "configmaps", namespace: NS };
    const WRITE_CM_ELSEWHERE: AccessCheck = { ...WRITE_CM, namespace: "default" };

    /** What the run's agent ServiceAccount may do, asked of the fake through SubjectAccessReviews. */
    async function grants(client: KubeClient, run: TestRun): Promise<Record<string, boolean>> {
      const subject = serviceAccountSubject(NS, run.plan.names.serviceAccount);
      const ask = async (c: AccessCheck) => (await client.review(c, subject)).allowed;
      return {
        listNodes: await ask(LIST_NODES),
        writeConfigMaps: await ask(WRITE_CM),
        writeConfigMapsElsewhere: await ask(WRITE_CM_ELSEWHERE),
        execPods: await ask(EXEC),
        patchNodes: await ask(PATCH_NODES),
        listNicDevices: await ask(LIST_NIC_DEVICES),
      };
    }

    const expectedGrants = (discover: boolean) => ({
      listNodes: true,
      writeConfigMaps: true,
      // The discovery rules only read the NIC operators' objects: nothing mutating, with or without them.
      writeConfigMapsElsewhere: false,
      execPods: false,
      patchNodes: false,
      listNicDevices: discover,
    });

    async function overlapping(count: number): Promise<void> {
      const client = adminClient(cluster());
      const ids = Array.from({ length: count }, () => testRunId(`c${count}`));
      const runs = ids.map((runId, i) =>
        newRun(client, captureLog(), { runId, discoverNetwork: i % 2 === 1 }),
      );
      try {
        const results = await Promise.all(runs.map((r) => driveRun(r)));
        const bytes = new Set<string>();
        for (const [i, result] of results.entries()) {
          const run = runs[i]!;
          // The result document names the run and the Job that produced it: its own, never a neighbour's.
          expect(result.runId).toBe(ids[i]!);
          expect(result.jobUid).toBe(run.jobUid!);
          expect(result.logs).toContain(ids[i]!);
          for (const other of ids.filter((id) => id !== ids[i])) expect(result.logs).not.toContain(other);
          bytes.add(result.bytes);
          expect(await grants(client, run)).toEqual(expectedGrants(i % 2 === 1));
        }
        expect(bytes.size).toBe(count);

        // Cleanup of the first run leaves every object of every other run, and their permissions.
        const before = ids.slice(1).map((id) => runObjects(cluster(), NS, id));
        const receipt = await runs[0]!.cleanup();
        expect(receipt.filter((r) => r.outcome !== "deleted")).toEqual([]);
        await untilRunGone(cluster(), NS, ids[0]!);
        expect(ids.slice(1).map((id) => runObjects(cluster(), NS, id))).toEqual(before);
        for (const [i, run] of runs.entries())
          if (i > 0) expect(await grants(client, run)).toEqual(expectedGrants(i % 2 === 1));
      } finally {
        await Promise.all(runs.map((r) => r.cleanup()));
      }
      for (const id of ids) await untilRunGone(cluster(), NS, id);
    }

    test(
      "two overlapping runs, one with discover-network: own logs, own result, own permissions, own cleanup",
      () => overlapping(2),
      TEST_TIMEOUT_MS,
    );

    test(
      "eight overlapping runs, half with discover-network: each isolated from the seven others",
      () => overlapping(8),
      TEST_TIMEOUT_MS,
    );
  });

import { describe, expect, test } from "bun:test";
import { NAMESPACED_RULES, toPolicyRule } from "../../src/rbac/rules.ts";
import { resource } from "../cluster/store.ts";
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
import { find, haveNamespace, runObjects, untilRunGone } from "./_store.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });

    /** What an operator does after the CLI was SIGKILLed: `kubectl delete clusterrole <anchor>`, nothing else. */
    async function deleteAnchorOnly(name: string): Promise<void> {
      await adminClient(cluster()).delete({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        name,
      });
    }

    test(
      "deleting only the anchor ClusterRole after a killed run: the garbage collector removes every run object",
      async () => {
        const runId = testRunId("9");
        const run = newRun(adminClient(cluster()), captureLog(), { runId });
        await run.deploy();
        expect((await run.waitForCompletion(TEST_TIMEOUT_MS)).succeeded).toBe(true);
        // Every kind is standing, the agent's staging ConfigMap included; the CLI "dies" here (no cleanup).
        expect(
          runObjects(cluster(), NS, runId)
            .map((o) => o.split("/")[0])
            .sort(),
        ).toEqual([
          "ClusterRole",
          "ClusterRoleBinding",
          "ConfigMap",
          "Job",
          "Pod",
          "Role",
          "RoleBinding",
          "ServiceAccount",
        ]);
        await deleteAnchorOnly(run.plan.names.clusterRole);
        await untilRunGone(cluster(), NS, runId);
        // The operator's one delete is the only one touching this run: the rest was the garbage collector.
        expect(
          cluster()
            .log.entries.filter((e) => e.method === "DELETE" && e.path.includes(runId))
            .map((e) => e.path),
        ).toEqual([`/apis/rbac.authorization.k8s.io/v1/clusterroles/${run.plan.names.clusterRole}`]);
        expect(find(cluster(), "namespaces", undefined, NS)).toBeDefined();
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "a delivered cm:// ConfigMap survives the anchor's deletion; the run's own objects do not",
      async () => {
        const runId = testRunId("a");
        const delivered = { namespace: NS, name: `delivered-${runId}` };
        const run = newRun(adminClient(cluster()), captureLog(), { runId, delivered });
        const result = await driveRun(run);
        const cm = find(cluster(), "configmaps", NS, delivered.name)!;
        expect(cm.data?.["snapshot.yaml"]).toBe(result.bytes);
        expect(cm.metadata.ownerReferences ?? []).toEqual([]);
        await deleteAnchorOnly(run.plan.names.clusterRole);
        await untilRunGone(cluster(), NS, runId);
        expect(find(cluster(), "configmaps", NS, delivered.name)?.metadata.uid).toBe(cm.metadata.uid);
        // And the run's own cleanup, had it still run, would not touch it either.
        const receipt = await run.cleanup();
        expect(receipt.find((r) => r.name === delivered.name)).toBeUndefined();
        expect(receipt.filter((r) => r.outcome !== "already-gone")).toEqual([]);
        expect(find(cluster(), "configmaps", NS, delivered.name)).toBeDefined();
        await cluster().store.delete(resource("configmaps"), NS, delivered.name, {});
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "killed mid-run, right after deploy: the anchor's deletion still takes the Job, its pod and whatever it wrote",
      async () => {
        const runId = testRunId("b");
        const run = newRun(adminClient(cluster()), captureLog(), { runId });
        await run.deploy();
        await deleteAnchorOnly(run.plan.names.clusterRole);
        await untilRunGone(cluster(), NS, runId);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "exact-ServiceAccount mode: the Job is the anchor, and deleting it takes its pod and staging ConfigMap",
      async () => {
        const sa = "crash-exact";
        await haveNamespace(cluster(), NS);
        await cluster().store.create(resource("serviceaccounts"), {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name: sa, namespace: NS },
        });
        const rbac = "rbac.authorization.k8s.io/v1";
        await cluster().store.create(resource("roles"), {
          apiVersion: rbac,
          kind: "Role",
          metadata: { name: sa, namespace: NS },
          rules: NAMESPACED_RULES.map(toPolicyRule),
        });
        await cluster().store.create(resource("rolebindings"), {
          apiVersion: rbac,
          kind: "RoleBinding",
          metadata: { name: sa, namespace: NS },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: sa },
          subjects: [{ kind: "ServiceAccount", name: sa, namespace: NS }],
        });
        const runId = testRunId("c");
        const run = newRun(adminClient(cluster()), captureLog(), { runId, serviceAccountName: sa });
        await run.deploy();
        expect((await run.waitForCompletion(TEST_TIMEOUT_MS)).succeeded).toBe(true);
        expect(runObjects(cluster(), NS, runId).map((o) => o.split("/")[0])).toEqual([
          "ConfigMap",
          "Job",
          "Pod",
        ]);
        await adminClient(cluster()).delete(
          { apiVersion: "batch/v1", kind: "Job", name: run.plan.names.job, namespace: NS },
          { propagationPolicy: "Background" },
        );
        await untilRunGone(cluster(), NS, runId);
        expect(find(cluster(), "serviceaccounts", NS, sa)).toBeDefined();
      },
      TEST_TIMEOUT_MS,
    );
  });

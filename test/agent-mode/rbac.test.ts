import { describe, expect, test } from "bun:test";
import { Writable } from "node:stream";
import { CLUSTER_BASELINE_RULES, NAMESPACED_RULES, toPolicyRule } from "../../src/rbac/rules.ts";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { adminClient, agentCluster, captureLog, newRun, testRunId } from "../deployer/_harness.ts";
import { useCluster } from "../support/cluster.ts";

/**
 * The agent inside the fake kubelet, running the compiled binary with its own ServiceAccount token:
 * exactly the reference Role rules are enough, and one rule fewer fails with the permission named.
 */
for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });
    const NS = "agent-rbac";

    async function grant(sa: string, roleRules: ReturnType<typeof toPolicyRule>[]) {
      const c = adminClient(cluster());
      await c.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } }).catch(() => undefined);
      await c.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: sa, namespace: NS } });
      const rbac = "rbac.authorization.k8s.io/v1";
      await c.create({
        apiVersion: rbac,
        kind: "Role",
        metadata: { name: sa, namespace: NS },
        rules: roleRules,
      });
      await c.create({
        apiVersion: rbac,
        kind: "RoleBinding",
        metadata: { name: sa, namespace: NS },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: sa },
        subjects: [{ kind: "ServiceAccount", name: sa, namespace: NS }],
      });
      await c.create({
        apiVersion: rbac,
        kind: "ClusterRole",
        metadata: { name: `${NS}-${sa}` },
        rules: CLUSTER_BASELINE_RULES.map(toPolicyRule),
      });
      await c.create({
        apiVersion: rbac,
        kind: "ClusterRoleBinding",
        metadata: { name: `${NS}-${sa}` },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `${NS}-${sa}` },
        subjects: [{ kind: "ServiceAccount", name: sa, namespace: NS }],
      });
    }

    function sink(): { out: Writable; text: () => string } {
      let text = "";
      const out = new Writable({
        write(chunk, _enc, cb) {
          text += chunk.toString();
          cb();
        },
      });
      return { out, text: () => text };
    }

    async function runAs(sa: string) {
      const run = newRun(adminClient(cluster()), captureLog(), {
        runId: testRunId("c"),
        namespace: NS,
        serviceAccountName: sa,
        nodeSelector: { "nvidia.com/gpu.present": "true" },
      });
      await run.deploy();
      const logs = sink();
      await run.streamLogs(await run.waitForPod(60_000), logs.out);
      const outcome = await run.waitForCompletion(60_000);
      return { run, outcome, logs: logs.text() };
    }

    test("with exactly the reference Role rules the agent writes its ConfigMap with its own token", async () => {
      await grant("exact-rules", NAMESPACED_RULES.map(toPolicyRule));
      const { run, outcome } = await runAs("exact-rules");
      try {
        expect(run.mode).toEqual({ kind: "exact", name: "exact-rules" });
        expect(outcome.succeeded).toBe(true);
        const doc = parseSnapshot(await run.readResult(), "result");
        expect(doc.measurements.map((m) => m.type)).toContain("K8s");
        const writes = cluster()
          .log.byUser("system:serviceaccount:agent-rbac:exact-rules")
          .filter((e) => e.method === "PATCH");
        expect(writes.length).toBe(1);
        expect(writes[0]?.status).toBe(201);
      } finally {
        await run.cleanup();
      }
    });

    test("without configmaps create the agent fails, and its log names the missing permission", async () => {
      const rules = NAMESPACED_RULES.map(toPolicyRule).map((r) =>
        r.resources.includes("configmaps") ? { ...r, verbs: r.verbs.filter((v) => v !== "create") } : r,
      );
      await grant("no-create", rules);
      const { run, outcome, logs } = await runAs("no-create");
      try {
        expect(outcome.succeeded).toBe(false);
        expect(logs).toContain(
          'cannot create resource \\"configmaps\\" in API group \\"\\" in the namespace \\"agent-rbac\\"',
        );
        expect(logs).toContain("UNAUTHORIZED");
      } finally {
        await run.cleanup();
      }
    });

    test("the agent retries its ConfigMap apply when the first response is lost, and the run succeeds", async () => {
      await grant("retry-apply", NAMESPACED_RULES.map(toPolicyRule));
      const fault = cluster().faults.add({
        method: "PATCH",
        path: `/api/v1/namespaces/${NS}/configmaps/*`,
        dropAfterCommit: true,
        nth: 1,
        count: 1,
      });
      const { run, outcome } = await runAs("retry-apply");
      try {
        expect(fault.fired).toBe(1);
        expect(outcome.succeeded).toBe(true);
        const patches = cluster()
          .log.byUser(`system:serviceaccount:${NS}:retry-apply`)
          .filter((e) => e.method === "PATCH");
        expect(patches.length).toBe(2);
        expect(parseSnapshot(await run.readResult(), "result").kind).toBe("Snapshot");
      } finally {
        fault.remove();
        await run.cleanup();
      }
    });
  });

import { beforeAll, describe, expect, test } from "bun:test";
import { AicrError } from "../../src/core/errors.ts";
import { resource } from "../cluster/store.ts";
import { BACKENDS, CLUSTER_HOOK_MS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { adminClient, agentCluster, captureLog, NS, newRun, TEST_TIMEOUT_MS, testRunId } from "./_harness.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });
    beforeAll(async () => {
      // Everything a run needs except reading ServiceAccounts.
      cluster().addUser("no-sa-reader");
      await cluster().store.create(resource("clusterroles"), {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "all-but-serviceaccounts" },
        rules: [
          {
            apiGroups: ["", "batch", "rbac.authorization.k8s.io"],
            resources: [
              "namespaces",
              "pods",
              "pods/log",
              "configmaps",
              "jobs",
              "roles",
              "rolebindings",
              "clusterroles",
              "clusterrolebindings",
            ],
            verbs: ["*"],
          },
        ],
      });
      await cluster().store.create(resource("clusterrolebindings"), {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "all-but-serviceaccounts" },
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: "all-but-serviceaccounts",
        },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "no-sa-reader" }],
      });
    }, CLUSTER_HOOK_MS);

    test(
      "a forbidden get on the named ServiceAccount: UNAUTHORIZED, refusing to guess, nothing written",
      async () => {
        const run = newRun(adminClient(cluster(), "no-sa-reader"), captureLog(), {
          runId: testRunId("5"),
          serviceAccountName: "irsa-snapshotter",
        });
        const err = await run.deploy().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(AicrError);
        expect((err as AicrError).code).toBe("UNAUTHORIZED");
        expect((err as AicrError).message).toContain("refusing to guess");
        const requests = cluster().log.byUser("no-sa-reader");
        expect(requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toContain(
          `GET /api/v1/namespaces/${NS}/serviceaccounts/irsa-snapshotter 403`,
        );
        // Not even the namespace ensure: the probe comes before the first write.
        expect(requests.filter((r) => r.method !== "GET")).toEqual([]);
        expect(await run.cleanup()).toEqual([]);
        expect(
          cluster()
            .log.byUser("no-sa-reader")
            .filter((r) => r.method !== "GET"),
        ).toEqual([]);
      },
      TEST_TIMEOUT_MS,
    );

    test("an invalid --job-name prefix is refused before any request", () => {
      const before = cluster().log.entries.length;
      expect(() =>
        newRun(adminClient(cluster()), captureLog(), { runId: testRunId("6"), jobPrefix: "Agent_" }),
      ).toThrow(
        expect.objectContaining({
          code: "INVALID_REQUEST",
          context: expect.objectContaining({ field: "--job-name" }),
        }),
      );
      expect(cluster().log.entries.length).toBe(before);
    });

    test(
      "a RuntimeClass that does not exist: NOT_FOUND with guidance, nothing written",
      async () => {
        const before = cluster().log.entries.length;
        const run = newRun(adminClient(cluster()), captureLog(), {
          runId: testRunId("7"),
          runtimeClassName: "nvidia",
        });
        const err = await run.deploy().then(
          () => undefined,
          (e: unknown) => e as AicrError,
        );
        expect(err?.code).toBe("NOT_FOUND");
        expect(err?.remedy).toContain("--node-selector");
        expect(
          cluster()
            .log.entries.slice(before)
            .filter((e) => e.method !== "GET"),
        ).toEqual([]);
        expect(await run.cleanup()).toEqual([]);
      },
      TEST_TIMEOUT_MS,
    );
  });

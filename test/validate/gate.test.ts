/** The permission gate: access reviews only, every missing permission listed at once, nothing created. */
import { beforeAll, describe, expect, test } from "bun:test";
import { resource } from "../cluster/resources.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { aicr, baseEnv } from "../e2e/_aicr.ts";
import { useCluster } from "../support/cluster.ts";
import { IMAGE, LONG, NS, SAMPLE_RECIPE, SNAPSHOT, validationCluster } from "./_harness.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { hookMs: LONG, start: validationCluster });
    beforeAll(async () => {
      cluster().addUser("ns-admin");
      await cluster().store.create(resource("namespaces"), {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: NS },
      });
      await cluster().store.create(resource("rolebindings"), {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "ns-admin", namespace: NS },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "admin" },
        subjects: [{ kind: "User", name: "ns-admin", apiGroup: "rbac.authorization.k8s.io" }],
      });
    }, LONG);

    test(
      "a namespace admin without cluster rights is refused before the first write (exit 4), everything listed",
      async () => {
        cluster().log.clear();
        const r = await aicr(
          [
            "validate",
            "-r",
            SAMPLE_RECIPE,
            "-s",
            SNAPSHOT,
            "-k",
            cluster().kubeconfigFor("ns-admin"),
            "-n",
            NS,
            "--image",
            IMAGE,
          ],
          { env: baseEnv() },
        );
        expect(r.code).toBe(4);
        expect(r.stderr).toMatch(
          /\[UNAUTHORIZED\] missing \d+ permission\(s\) the validation run needs; nothing was created/,
        );
        for (const line of [
          'the caller (your kubeconfig identity) cannot "create" clusterroles.rbac.authorization.k8s.io (cluster-scoped)',
          'the caller (your kubeconfig identity) cannot "delete" clusterrolebindings.rbac.authorization.k8s.io (cluster-scoped)',
          `the caller (your kubeconfig identity) cannot "list" nodes (cluster-scoped), which the run's ClusterRole grants: creating it would be refused as privilege escalation`,
          `the caller (your kubeconfig identity) cannot "list" clusterpolicies.nvidia.com (cluster-scoped), which the run's ClusterRole grants: creating it would be refused as privilege escalation`,
        ])
          expect(r.stderr).toContain(line);
        expect(r.stderr).not.toContain(`(namespace "${NS}")`);
        const writes = cluster()
          .log.mutatingRequests()
          .filter((e) => !e.path.includes("accessreviews"));
        expect(writes.map((e) => `${e.method} ${e.path}`)).toEqual([]);
      },
      LONG,
    );
  });

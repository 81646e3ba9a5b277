import { describe, expect, test } from "bun:test";
import type { AicrError } from "../../src/core/errors.ts";
import { cleanupLegacy } from "../../src/legacy/cleanup.ts";
import { BACKENDS, type TestCluster as Cluster } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import {
  bindingObject,
  captureLog,
  checksFor,
  clientFor,
  exists,
  namespace,
  options,
  put,
  seedClusterScoped,
  seedNamespace,
  TEST_MS,
  untilGranted,
  writesTo,
} from "./_seed.ts";

const NS = "gpu-operator";
const LEGACY_RESOURCES = [
  { apiGroups: ["batch"], resources: ["jobs"] },
  { apiGroups: [""], resources: ["serviceaccounts", "configmaps"] },
  {
    apiGroups: ["rbac.authorization.k8s.io"],
    resources: ["roles", "rolebindings", "clusterroles", "clusterrolebindings"],
  },
];

const CLUSTER_SCOPED = [
  { apiGroups: ["rbac.authorization.k8s.io"], resources: ["clusterroles", "clusterrolebindings"] },
];

/** Grants `user` `verbs` on the legacy resources (default: all of them), cluster-wide or in one namespace. */
async function grant(
  cluster: Cluster,
  user: string,
  verbs: string[],
  where: { ns?: string; resources?: typeof LEGACY_RESOURCES } = {},
): Promise<void> {
  const { ns } = where;
  const name = `${user}-${verbs.join("-")}-${ns ?? "cluster"}`;
  const rules = (where.resources ?? LEGACY_RESOURCES).map((r) => ({ ...r, verbs }));
  if (ns) {
    await put(cluster, "roles", { metadata: { name, namespace: ns }, rules });
    await put(
      cluster,
      "rolebindings",
      bindingObject(name, { kind: "Role", name }, [{ kind: "User", name: user }], { namespace: ns }),
    );
  } else {
    await put(cluster, "clusterroles", { metadata: { name }, rules });
    await put(
      cluster,
      "clusterrolebindings",
      bindingObject(name, { kind: "ClusterRole", name }, [{ kind: "User", name: user }]),
    );
  }
  await untilGranted(cluster, { user, groups: [] }, checksFor(rules, ns));
}

for (const backend of BACKENDS)
  describe(`[${backend}] the permission gate`, () => {
    const cluster = useCluster(backend, { per: "test", controllers: false });

    test(
      "runs first and reports every missing permission at once (UNAUTHORIZED); nothing is read or deleted",
      async () => {
        await seedNamespace(cluster(), NS);
        await seedClusterScoped(cluster(), NS);
        cluster().addUser("reader", []);
        await grant(cluster(), "reader", ["get", "list"]);
        cluster().log.clear();
        const err = (await cleanupLegacy(clientFor(cluster(), "reader"), options()).catch(
          (e) => e,
        )) as AicrError;
        expect(err.code).toBe("UNAUTHORIZED");
        expect(err.message).toContain(
          'cannot "delete" clusterroles.rbac.authorization.k8s.io "aicr-node-reader" (cluster-scoped)',
        );
        expect(err.message).toContain('cannot "delete" jobs.batch "aicr" (namespace "gpu-operator")');
        expect(err.message).not.toContain('cannot "get"');
        expect((err.context.missing as string[]).length).toBe(9);
        expect(cluster().log.entries.every((e) => e.path.startsWith("/apis/authorization.k8s.io/"))).toBe(
          true,
        );
        expect(exists(cluster(), "jobs", NS, "aicr")).toBe(true);
      },
      TEST_MS,
    );

    test(
      "--dry-run needs only the reads; the missing deletes become warnings",
      async () => {
        await seedNamespace(cluster(), NS);
        cluster().addUser("reader", []);
        await grant(cluster(), "reader", ["get", "list"]);
        const captured = captureLog();
        const { stage } = await cleanupLegacy(
          clientFor(cluster(), "reader"),
          options({ dryRun: true, log: captured.log }),
        );
        expect(stage).toBe("plan");
        expect(
          captured.lines.some((l) =>
            l.includes(
              'a real run would fail: the caller (your kubeconfig identity) cannot "delete" jobs.batch "aicr"',
            ),
          ),
        ).toBe(true);
        expect(writesTo(cluster())).toEqual([]);
      },
      TEST_MS,
    );

    test(
      "without even the reads, a dry run is refused too, listing them",
      async () => {
        cluster().addUser("nobody", []);
        await namespace(cluster(), NS);
        const err = (await cleanupLegacy(clientFor(cluster(), "nobody"), options({ dryRun: true })).catch(
          (e) => e,
        )) as AicrError;
        expect(err.code).toBe("UNAUTHORIZED");
        expect(err.message).toContain('cannot "get" serviceaccounts "aicr" (namespace "gpu-operator")');
        expect(err.message).not.toContain('"delete"');
      },
      TEST_MS,
    );

    test(
      "a namespace-scoped grant is enough for -n, not for --all-namespaces",
      async () => {
        await namespace(cluster(), NS);
        cluster().addUser("ops", []);
        await grant(cluster(), "ops", ["get", "list", "delete"], { ns: NS });
        await grant(cluster(), "ops", ["get", "delete"], { resources: CLUSTER_SCOPED });
        const ok = await cleanupLegacy(clientFor(cluster(), "ops"), options());
        expect(ok.receipt.entries).toEqual([]);
        const err = (await cleanupLegacy(
          clientFor(cluster(), "ops"),
          options({ scope: { allNamespaces: true } }),
        ).catch((e) => e)) as AicrError;
        expect(err.code).toBe("UNAUTHORIZED");
        expect(err.message).toContain('cannot "list" jobs.batch (cluster-scoped)');
      },
      TEST_MS,
    );

    test(
      "a binding's namespace whose Jobs cannot be read keeps the binding (fails closed)",
      async () => {
        await seedNamespace(cluster(), NS);
        await seedNamespace(cluster(), "locked");
        await seedClusterScoped(cluster(), "locked");
        cluster().addUser("ops", []);
        // Everything in gpu-operator and the cluster-scoped names, but no reading of Jobs in "locked".
        await grant(cluster(), "ops", ["get", "list", "delete"], { ns: NS });
        await grant(cluster(), "ops", ["get", "delete"], { resources: CLUSTER_SCOPED });
        const { receipt } = await cleanupLegacy(clientFor(cluster(), "ops"), options());
        const crb = receipt.entries.find(
          (e) => e.kind === "ClusterRoleBinding" && e.name === "aicr-node-reader",
        );
        expect(crb?.action).toBe("keep");
        expect(crb?.reason).toContain('namespace "locked" could not be read');
        expect(exists(cluster(), "clusterrolebindings", undefined, "aicr-node-reader")).toBe(true);
      },
      TEST_MS,
    );
  });

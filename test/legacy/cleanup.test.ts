import { describe, expect, test } from "bun:test";
import { type CleanupOptions, cleanupLegacy, verdict } from "../../src/legacy/cleanup.ts";
import { resource } from "../cluster/store.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import {
  adminClient,
  bindingObject,
  clusterRoleObject,
  entry,
  exists,
  namespace,
  never,
  options,
  outcomes,
  put,
  RUN_ID,
  seedClusterScoped,
  seedNamespace,
  seedRunScoped,
  TEST_MS,
  untilGone,
  writesTo,
} from "./_seed.ts";

const NS = "gpu-operator";

for (const backend of BACKENDS)
  describe(`[${backend}] cleanup-legacy against a cluster`, () => {
    const cluster = useCluster(backend, { per: "test", controllers: false });
    const run = (overrides: Partial<CleanupOptions> = {}) =>
      cleanupLegacy(adminClient(cluster()), options(overrides));

    test(
      "exactly the legacy objects go; every decoy stays, with its reason where it was seen",
      async () => {
        await seedNamespace(cluster(), NS);
        await seedClusterScoped(cluster(), NS);
        await seedRunScoped(cluster(), NS);
        // A same-named ClusterRole that grants one thing aicr never did.
        await cluster().store.delete(resource("clusterroles"), undefined, "aicr-node-reader");
        const widened = clusterRoleObject("aicr-node-reader");
        widened.rules.push({ apiGroups: [""], resources: ["secrets"], verbs: ["get"] });
        await put(cluster(), "clusterroles", widened);
        // A foreign aicr ServiceAccount in a namespace not named with -n.
        await namespace(cluster(), "team-a");
        await put(cluster(), "serviceaccounts", { metadata: { name: "aicr", namespace: "team-a" } });

        const { receipt, stage } = await run();
        expect(stage).toBe("receipt");
        expect(outcomes(receipt)).toEqual([
          "deleted Job gpu-operator/aicr",
          "deleted Job gpu-operator/aicr-validate",
          "kept ConfigMap gpu-operator/aicr-snapshot",
          "deleted RoleBinding gpu-operator/aicr",
          "deleted ClusterRoleBinding aicr-node-reader",
          "deleted ClusterRoleBinding aicr-validator",
          "deleted Role gpu-operator/aicr",
          "kept ClusterRole aicr-node-reader",
          "deleted ServiceAccount gpu-operator/aicr",
          "deleted ServiceAccount gpu-operator/aicr-validator",
        ]);
        expect(entry(receipt, "ClusterRole", "aicr-node-reader").reason).toContain("get secrets (core)");
        expect(entry(receipt, "ConfigMap", "aicr-snapshot", NS).reason).toContain("--include-configmaps");
        expect(verdict(receipt, never)).toBeUndefined();

        expect(exists(cluster(), "clusterroles", undefined, "aicr-node-reader")).toBe(true);
        expect(exists(cluster(), "configmaps", NS, "aicr-snapshot")).toBe(true);
        expect(exists(cluster(), "serviceaccounts", "team-a", "aicr")).toBe(true);
        expect(exists(cluster(), "clusterroles", undefined, `aicr-node-reader-${RUN_ID}`)).toBe(true);
        expect(exists(cluster(), "clusterrolebindings", undefined, `aicr-node-reader-${RUN_ID}`)).toBe(true);
        expect(exists(cluster(), "serviceaccounts", NS, `aicr-${RUN_ID}`)).toBe(true);
        for (const [plural, name] of [
          ["jobs", "aicr"],
          ["serviceaccounts", "aicr"],
          ["roles", "aicr"],
          ["rolebindings", "aicr"],
        ]) {
          await untilGone(cluster(), plural as string, NS, name as string);
        }
        await untilGone(cluster(), "clusterrolebindings", undefined, "aicr-node-reader");
      },
      TEST_MS,
    );

    test(
      "every delete carries the planned uid and resourceVersion; Jobs go with Background propagation",
      async () => {
        await seedNamespace(cluster(), NS);
        const job = cluster().store.get(resource("jobs"), NS, "aicr");
        cluster().log.clear();
        await run();
        const deletes = cluster().log.entries.filter((e) => e.method === "DELETE");
        expect(deletes.length).toBe(6);
        for (const d of deletes) {
          const body = d.body as { preconditions?: { uid?: string; resourceVersion?: string } };
          expect(body.preconditions?.uid).toBeTruthy();
          expect(body.preconditions?.resourceVersion).toBeTruthy();
        }
        const jobDelete = deletes.find((d) => d.path === `/apis/batch/v1/namespaces/${NS}/jobs/aicr`);
        expect(jobDelete?.body).toMatchObject({
          propagationPolicy: "Background",
          preconditions: { uid: job.metadata.uid, resourceVersion: job.metadata.resourceVersion },
        });
      },
      TEST_MS,
    );

    test(
      "a ClusterRoleBinding bound to a User stays, and keeps the ClusterRole it grants",
      async () => {
        await put(cluster(), "clusterroles", clusterRoleObject("aicr-node-reader"));
        await put(
          cluster(),
          "clusterrolebindings",
          bindingObject("aicr-node-reader", { kind: "ClusterRole", name: "aicr-node-reader" }, [
            { kind: "User", name: "alice" },
          ]),
        );
        const { receipt } = await run();
        expect(entry(receipt, "ClusterRoleBinding", "aicr-node-reader").reason).toContain("User alice");
        expect(entry(receipt, "ClusterRole", "aicr-node-reader").reason).toContain("which is kept");
        expect(writesTo(cluster())).toEqual([]);
      },
      TEST_MS,
    );

    test(
      "an active legacy Job keeps itself and what it runs with; --force removes them",
      async () => {
        await seedNamespace(cluster(), NS, { activeJob: true });
        await seedClusterScoped(cluster(), NS);
        const first = await run({ includeConfigMaps: true });
        expect(outcomes(first.receipt)).toEqual([
          "kept Job gpu-operator/aicr",
          "deleted Job gpu-operator/aicr-validate",
          "deleted ConfigMap gpu-operator/aicr-snapshot",
          "kept RoleBinding gpu-operator/aicr",
          "kept ClusterRoleBinding aicr-node-reader",
          "deleted ClusterRoleBinding aicr-validator",
          "kept Role gpu-operator/aicr",
          "kept ClusterRole aicr-node-reader",
          "kept ServiceAccount gpu-operator/aicr",
          "deleted ServiceAccount gpu-operator/aicr-validator",
        ]);
        expect(entry(first.receipt, "Job", "aicr", NS).reason).toContain(
          "still active (1 active pod(s)); pass --force",
        );

        const forced = await run({ force: true });
        expect(forced.receipt.entries.map((e) => e.outcome)).toEqual(Array(6).fill("deleted"));
        await untilGone(cluster(), "jobs", NS, "aicr");
      },
      TEST_MS,
    );

    test(
      "an active legacy Job outside the scope keeps the cluster-scoped pair bound to its account",
      async () => {
        await seedNamespace(cluster(), NS);
        await seedNamespace(cluster(), "elsewhere", { activeJob: true });
        await seedClusterScoped(cluster(), "elsewhere");
        const { receipt } = await run();
        expect(entry(receipt, "ClusterRoleBinding", "aicr-node-reader").reason).toContain(
          "Job elsewhere/aicr",
        );
        expect(entry(receipt, "ClusterRole", "aicr-node-reader").action).toBe("keep");
        expect(entry(receipt, "ClusterRoleBinding", "aicr-validator").reason).toContain(
          "not in scope (elsewhere)",
        );
        expect(exists(cluster(), "jobs", "elsewhere", "aicr")).toBe(true);
      },
      TEST_MS,
    );

    test(
      "--all-namespaces finds the legacy names in every namespace, and nothing else",
      async () => {
        await seedNamespace(cluster(), "a");
        await seedNamespace(cluster(), "b");
        await seedRunScoped(cluster(), "b");
        await put(cluster(), "serviceaccounts", { metadata: { name: "aicr-other", namespace: "a" } });
        const { receipt } = await run({ scope: { allNamespaces: true } });
        const deleted = receipt.entries
          .filter((e) => e.outcome === "deleted")
          .map((e) => `${e.namespace}/${e.kind}/${e.name}`);
        expect(deleted.length).toBe(12);
        expect(new Set(receipt.entries.map((e) => e.namespace))).toEqual(new Set(["a", "b"]));
        expect(exists(cluster(), "serviceaccounts", "a", "aicr-other")).toBe(true);
        expect(exists(cluster(), "serviceaccounts", "b", `aicr-${RUN_ID}`)).toBe(true);
      },
      TEST_MS,
    );

    test(
      "nothing legacy in the cluster: an empty receipt and success",
      async () => {
        await namespace(cluster(), NS);
        const { receipt } = await run();
        expect(receipt.entries).toEqual([]);
        expect(verdict(receipt, never)).toBeUndefined();
      },
      TEST_MS,
    );

    test(
      "a run-labelled object named exactly aicr is kept, saying why",
      async () => {
        await namespace(cluster(), NS);
        await put(cluster(), "serviceaccounts", {
          metadata: { name: "aicr", namespace: NS, labels: { "aicr.run/run-id": RUN_ID } },
        });
        const { receipt } = await run({ force: true });
        expect(entry(receipt, "ServiceAccount", "aicr", NS).reason).toContain("aicr.run/run-id");
        expect(exists(cluster(), "serviceaccounts", NS, "aicr")).toBe(true);
      },
      TEST_MS,
    );
  });

/**
 * Objects aicr does not own are not modified: an existing namespace keeps its labels (managed-by is
 * only added when absent), a missing one is created with a WARN naming the command that removes it,
 * and a cm:// target aicr never wrote is refused before anything is deployed unless --overwrite.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { KObject } from "../cluster/objects.ts";
import { resource } from "../cluster/resources.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { untilStore } from "../support/until.ts";
import {
  AGENT_IMAGE,
  type Cluster,
  freshNamespace,
  lastSeq,
  put,
  runIdOf,
  runSnapshot,
  STUCK_MS,
  snapshotCluster,
  TEST_MS,
  untilNoRunObjects,
} from "./_harness.ts";

const MANAGED_BY = "app.kubernetes.io/managed-by";
const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The admin's writes since `since`: access reviews and server-side dry runs write nothing and are left out. */
const adminWrites = (cluster: Cluster, since: number) =>
  cluster.log.entries.filter(
    (e) =>
      e.seq > since &&
      e.user === "admin" &&
      WRITE_METHODS.has(e.method) &&
      !e.path.includes("accessreviews") &&
      e.query.dryRun !== "All",
  );

const namespaceLabels = (cluster: Cluster, ns: string) =>
  cluster.store.find(resource("namespaces"), undefined, ns)?.metadata.labels ?? {};

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });
    const img = ["--image", AGENT_IMAGE];

    test(
      "a namespace labelled managed-by=Helm keeps that label after a run",
      async () => {
        const ns = await freshNamespace(cluster(), "helm-owned", { [MANAGED_BY]: "Helm", team: "gpu" });
        const since = lastSeq(cluster());
        const r = await runSnapshot(admin, ["-n", ns, ...img]);
        expect(r.code, r.stderr).toBe(0);
        expect(namespaceLabels(cluster(), ns)).toMatchObject({ [MANAGED_BY]: "Helm", team: "gpu" });
        expect(adminWrites(cluster(), since).filter((e) => e.path === `/api/v1/namespaces/${ns}`)).toEqual(
          [],
        );
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "a namespace without the label gets managed-by=aicr added; its other labels are untouched",
      async () => {
        const ns = await freshNamespace(cluster(), "unlabelled", { team: "gpu" });
        const r = await runSnapshot(admin, ["-n", ns, ...img]);
        expect(r.code, r.stderr).toBe(0);
        const labels = await untilStore(
          cluster(),
          () => {
            const l = namespaceLabels(cluster(), ns);
            return l[MANAGED_BY] === "aicr" ? l : undefined;
          },
          `namespace ${ns} labelled ${MANAGED_BY}=aicr`,
          STUCK_MS,
        );
        expect(labels.team).toBe("gpu");
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "a missing namespace is created, and the run warns naming it and the command that removes it",
      async () => {
        const ns = `gpu-opertor-${backend}`;
        expect(cluster().store.find(resource("namespaces"), undefined, ns)).toBeUndefined();
        const r = await runSnapshot(admin, ["-n", ns, ...img]);
        expect(r.code, r.stderr).toBe(0);
        const warn = r.stderr.split("\n").find((l) => l.includes(`kubectl delete namespace ${ns}`));
        expect(warn, r.stderr).toBeDefined();
        expect(warn).toMatch(/WARN/i);
        expect(warn).toContain(`created namespace ${ns}`);
        await untilStore(
          cluster(),
          () => cluster().store.find(resource("namespaces"), undefined, ns),
          `namespace ${ns}`,
          STUCK_MS,
        );
        expect(namespaceLabels(cluster(), ns)[MANAGED_BY]).toBe("aicr");
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "a cm:// target aicr did not write: refused before any write (exit 2, CONFLICT); --overwrite writes it; then it is aicr's",
      async () => {
        const ns = await freshNamespace(cluster(), "foreign-cm");
        const foreign: KObject = {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "foreign", namespace: ns, labels: { owner: "someone-else" } },
          data: { important: "do not touch" },
        };
        await put(cluster(), "configmaps", foreign);
        const target = `cm://${ns}/foreign`;

        const since = lastSeq(cluster());
        const refused = await runSnapshot(admin, ["-n", ns, ...img, "-o", target]);
        expect(refused.code, refused.stderr).toBe(2);
        expect(refused.stderr).toContain("[CONFLICT]");
        expect(refused.stderr).toContain(`ConfigMap ${ns}/foreign`);
        expect(refused.stderr).toContain("--overwrite");
        expect(adminWrites(cluster(), since)).toEqual([]);
        const untouched = cluster().store.find(resource("configmaps"), ns, "foreign") as KObject & {
          data?: Record<string, string>;
        };
        expect(untouched.data).toEqual({ important: "do not touch" });

        const overwritten = await runSnapshot(admin, ["-n", ns, ...img, "-o", target, "--overwrite"]);
        expect(overwritten.code, overwritten.stderr).toBe(0);
        const firstRun = runIdOf(overwritten.stderr);
        const written = (await untilStore(
          cluster(),
          () => {
            const cm = cluster().store.find(resource("configmaps"), ns, "foreign") as
              | (KObject & { data?: Record<string, string> })
              | undefined;
            return cm?.data?.["snapshot.yaml"]?.includes(firstRun) ? cm : undefined;
          },
          `configmap ${ns}/foreign written by run ${firstRun}`,
          STUCK_MS,
        )) as KObject & { data?: Record<string, string> };
        expect(written.metadata.labels?.["app.kubernetes.io/name"]).toBe("aicr");
        await untilNoRunObjects(cluster(), ns);

        // Now written by aicr (a previous run's delivery): accepted without --overwrite.
        const again = await runSnapshot(admin, ["-n", ns, ...img, "-o", target]);
        expect(again.code, again.stderr).toBe(0);
        const secondRun = runIdOf(again.stderr);
        await untilStore(
          cluster(),
          () =>
            (
              cluster().store.find(resource("configmaps"), ns, "foreign") as
                | (KObject & { data?: Record<string, string> })
                | undefined
            )?.data?.["snapshot.yaml"]?.includes(secondRun),
          `configmap ${ns}/foreign written by run ${secondRun}`,
          STUCK_MS,
        );
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS * 2,
    );
  });

import { beforeAll, describe, expect, test } from "bun:test";
import { runLabels } from "../../src/run/labels.ts";
import { type KObject, resource } from "../cluster/store.ts";
import { BACKENDS, CLUSTER_HOOK_MS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { untilStore } from "../support/until.ts";
import {
  adminClient,
  agentCluster,
  captureLog,
  NS,
  newRun,
  TEST_TIMEOUT_MS,
  type TestRun,
  testRunId,
} from "./_harness.ts";
import { find, haveNamespace } from "./_store.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });
    beforeAll(async () => {
      await haveNamespace(cluster(), NS);
    }, CLUSTER_HOOK_MS);

    const ROLE_PATH = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`;

    /** A run whose Role create was sent but never answered: cleanup knows the name, not the identity. */
    function runWithLostRole(tag: string): { run: TestRun; runId: string; name: string } {
      const runId = testRunId(tag);
      const run = newRun(adminClient(cluster()), captureLog(), { runId, invocationId: `inv-${tag}` });
      const name = run.plan.names.serviceAccount;
      run.created.recordIntent({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        name,
        namespace: NS,
      });
      return { run, runId, name };
    }

    async function putRole(name: string, labels?: Record<string, string>): Promise<KObject> {
      return await cluster().store.create(resource("roles"), {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name, namespace: NS, ...(labels ? { labels } : {}) },
        rules: [],
      });
    }

    const deletesOf = (name: string) => cluster().log.requestsOn(`${ROLE_PATH}/${name}`, "DELETE");

    const rows: [
      string,
      string,
      (runId: string, inv: string) => Record<string, string> | undefined | null,
    ][] = [
      ["this invocation's own object", "deleted", (runId, inv) => runLabels({ runId, invocationId: inv })],
      ["nothing at the name", "already-gone", () => null],
      [
        "a twin invocation's object (same run ID)",
        "left-behind",
        (runId) => runLabels({ runId, invocationId: "other" }),
      ],
      [
        "another run's object",
        "left-behind",
        (_runId, inv) => runLabels({ runId: "20261129-120000-ffffffffffffffff", invocationId: inv }),
      ],
      ["an unlabeled object", "left-behind", () => undefined],
    ];

    for (const [i, [what, outcome, labelsFor]] of rows.entries()) {
      test(
        `an unconfirmed entry, ${what}: ${outcome}`,
        async () => {
          const tag = `p${i}`;
          const { run, runId, name } = runWithLostRole(tag);
          const labels = labelsFor(runId, `inv-${tag}`);
          const standing = labels === null ? undefined : await putRole(name, labels);
          const receipt = await run.cleanup();
          expect(receipt).toEqual([expect.objectContaining({ kind: "Role", name, outcome })]);
          if (outcome === "deleted") {
            expect(
              deletesOf(name).map((e) => (e.body as { preconditions: { uid: string } }).preconditions.uid),
            ).toEqual([standing!.metadata.uid!]);
            // The delete is answered; the real backend's mirror sees it a moment later.
            await untilStore(
              cluster(),
              () => find(cluster(), "roles", NS, name) === undefined,
              `Role ${name} gone`,
            );
          } else {
            expect(deletesOf(name)).toEqual([]);
            if (standing)
              expect(find(cluster(), "roles", NS, name)?.metadata.uid).toBe(standing.metadata.uid);
          }
        },
        TEST_TIMEOUT_MS,
      );
    }

    test(
      "a left-behind object is named in a WARN with both run IDs and the object's invocation ID",
      async () => {
        const runId = testRunId("w");
        const sink = captureLog();
        const run = newRun(adminClient(cluster()), sink, { runId, invocationId: "inv-w" });
        const name = run.plan.names.serviceAccount;
        run.created.recordIntent({
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          name,
          namespace: NS,
        });
        await putRole(name, runLabels({ runId, invocationId: "inv-twin" }));
        await run.cleanup();
        const [warn] = sink.find("cleanup left behind an object it cannot prove this run created");
        expect(warn).toMatchObject({
          kind: "Role",
          name,
          runID: runId,
          objectRunID: runId,
          objectInvocationID: "inv-twin",
        });
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "a confirmed entry whose object was replaced: the UID precondition fails, counted as not ours",
      async () => {
        const { run, name } = runWithLostRole("r");
        const original = await putRole(name);
        run.created.confirm(
          { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", name, namespace: NS },
          original.metadata.uid!,
        );
        await cluster().store.delete(resource("roles"), NS, name, {});
        const replacement = await putRole(name);
        const receipt = await run.cleanup();
        expect(receipt).toEqual([expect.objectContaining({ kind: "Role", outcome: "not-ours" })]);
        expect(deletesOf(name).map((e) => e.status)).toEqual([409]);
        expect(find(cluster(), "roles", NS, name)?.metadata.uid).toBe(replacement.metadata.uid);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "a failed ownership check or delete is reported, and every other delete is still attempted",
      async () => {
        const { run, runId, name } = runWithLostRole("x");
        await putRole(name, runLabels({ runId, invocationId: "inv-x" }));
        const sa = await cluster().store.create(resource("serviceaccounts"), {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name, namespace: NS },
        });
        run.created.confirm(
          { apiVersion: "v1", kind: "ServiceAccount", name, namespace: NS },
          sa.metadata.uid!,
        );
        const cm = await cluster().store.create(resource("configmaps"), {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: `cm-${runId}`, namespace: NS },
        });
        run.created.confirm(
          { apiVersion: "v1", kind: "ConfigMap", name: cm.metadata.name!, namespace: NS },
          cm.metadata.uid!,
        );
        const faults = [
          cluster().faults.add({ method: "GET", path: `${ROLE_PATH}/${name}`, status: 500 }),
          cluster().faults.add({
            method: "DELETE",
            path: `/api/v1/namespaces/${NS}/serviceaccounts/${name}`,
            status: 500,
          }),
        ];
        const receipt = await run.cleanup();
        for (const f of faults) f.remove();
        const by = (kind: string) => receipt.find((r) => r.kind === kind);
        expect(by("Role")).toMatchObject({ outcome: "failed" });
        expect(by("Role")?.detail).toContain("cannot verify ownership");
        expect(deletesOf(name)).toEqual([]);
        expect(by("ServiceAccount")).toMatchObject({ outcome: "failed" });
        expect(by("ConfigMap")).toMatchObject({ outcome: "deleted" });
        expect(find(cluster(), "roles", NS, name)).toBeDefined();
      },
      TEST_TIMEOUT_MS,
    );
  });

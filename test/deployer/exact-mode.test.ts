import { beforeAll, describe, expect, test } from "bun:test";
import { parseAllDocuments } from "yaml";
import { renderAgentRbac } from "../../src/rbac/_render.ts";
import { type KObject, resource } from "../cluster/store.ts";
import { BACKENDS, CLUSTER_HOOK_MS } from "../cluster/testbed.ts";
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
import { find, haveNamespace, untilRunGone } from "./_store.ts";

const SA = "irsa-snapshotter";
const ROLE_ARN = "arn:aws:iam::123456789012:role/aicr-snapshot";
const RBAC_KINDS = ["serviceaccounts", "roles", "rolebindings", "clusterroles", "clusterrolebindings"];

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: agentCluster });
    let granted: KObject[];
    beforeAll(async () => {
      await haveNamespace(cluster(), NS);
      await cluster().store.create(resource("serviceaccounts"), {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: SA, namespace: NS, annotations: { "eks.amazonaws.com/role-arn": ROLE_ARN } },
      });
      // What the operator applied out of band from `aicr render-rbac`: the run must neither need nor touch more.
      const rendered = renderAgentRbac({
        namespace: NS,
        serviceAccount: SA,
        discoverNetwork: false,
        runId: "x",
      });
      granted = [];
      for (const f of rendered.files) {
        const doc = parseAllDocuments(f.content)
          .find((d) => d.contents !== null)!
          .toJSON() as KObject;
        const plural = `${doc.kind!.toLowerCase()}s`;
        granted.push(await cluster().store.create(resource(plural), doc));
      }
    }, CLUSTER_HOOK_MS);

    test(
      "an existing ServiceAccount is used verbatim: the run creates only its Job, and cleanup deletes only it and the staging ConfigMap",
      async () => {
        const runId = testRunId("c");
        const sink = captureLog();
        const run = newRun(adminClient(cluster()), sink, { runId, serviceAccountName: SA });
        const seq = cluster().log.entries.length;
        let receipt: Awaited<ReturnType<typeof run.cleanup>> = [];
        try {
          const result = await driveRun(run);
          expect(run.mode).toEqual({ kind: "exact", name: SA });
          expect(result.runId).toBe(runId);
          const job = find(cluster(), "jobs", NS, run.plan.names.job)!;
          expect(job.spec.template.spec.serviceAccountName).toBe(SA);
          // In exact mode the Job is the anchor: it carries no owner itself.
          expect(job.metadata.ownerReferences ?? []).toEqual([]);
          const pod = cluster().store.list(resource("pods"), {
            namespace: NS,
            labelSelector: `aicr.run/run-id=${runId}`,
          }).items[0]!;
          expect(pod.spec.serviceAccountName).toBe(SA);
        } finally {
          receipt = await run.cleanup();
        }
        expect(receipt.map((r) => `${r.kind} ${r.name} ${r.outcome}`).sort()).toEqual([
          `ConfigMap aicr-agent-snapshot-${runId} deleted`,
          `Job ${run.plan.names.job} deleted`,
        ]);
        await untilRunGone(cluster(), NS, runId);

        const mutations = cluster()
          .log.entries.slice(seq)
          .filter((e) => e.user === "admin" && !["GET", "HEAD"].includes(e.method));
        for (const plural of RBAC_KINDS)
          expect(mutations.filter((e) => e.path.includes(`/${plural}`))).toEqual([]);
        expect(
          mutations
            .filter((e) => e.method === "DELETE")
            .map((e) => e.path.split("/").slice(-2).join("/"))
            .sort(),
        ).toEqual([`configmaps/aicr-agent-snapshot-${runId}`, `jobs/${run.plan.names.job}`]);

        const sa = find(cluster(), "serviceaccounts", NS, SA)!;
        expect(sa.metadata.annotations?.["eks.amazonaws.com/role-arn"]).toBe(ROLE_ARN);
        for (const g of granted)
          expect(
            find(cluster(), `${g.kind!.toLowerCase()}s`, g.metadata.namespace, g.metadata.name!)?.metadata
              .uid,
          ).toBe(g.metadata.uid);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "a named ServiceAccount that does not exist is a prefix: the run creates and deletes its own",
      async () => {
        const runId = testRunId("d");
        const run = newRun(adminClient(cluster()), captureLog(), { runId, serviceAccountName: "team-snap" });
        let receipt: Awaited<ReturnType<typeof run.cleanup>> = [];
        try {
          await driveRun(run);
          expect(run.mode).toEqual({ kind: "prefix", prefix: "team-snap" });
          expect(find(cluster(), "serviceaccounts", NS, `team-snap-${runId}`)).toBeDefined();
        } finally {
          receipt = await run.cleanup();
        }
        expect(receipt.filter((r) => r.outcome !== "deleted")).toEqual([]);
        expect(receipt.length).toBe(7);
        await untilRunGone(cluster(), NS, runId);
      },
      TEST_TIMEOUT_MS,
    );

    test(
      "an unset ServiceAccount name is never probed, even when a ServiceAccount named aicr exists",
      async () => {
        await cluster().store.create(resource("serviceaccounts"), {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name: "aicr", namespace: NS },
        });
        const runId = testRunId("e");
        const run = newRun(adminClient(cluster()), captureLog(), { runId });
        const seq = cluster().log.entries.length;
        try {
          await run.deploy();
          expect(run.mode).toEqual({ kind: "prefix", prefix: undefined });
          expect(
            cluster()
              .log.entries.slice(seq)
              .filter((e) => e.path.endsWith("/serviceaccounts/aicr")),
          ).toEqual([]);
        } finally {
          await run.cleanup();
        }
        await untilRunGone(cluster(), NS, runId);
        expect(find(cluster(), "serviceaccounts", NS, "aicr")).toBeDefined();
      },
      TEST_TIMEOUT_MS,
    );
  });

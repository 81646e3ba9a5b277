/**
 * examples/agent-networkpolicy.yaml, the NetworkPolicy the migration notes describe: read as an
 * operator would apply it, it admits no ingress, allows egress only to ipBlocks on TCP (the API
 * server; no DNS), and its podSelector picks the agent pod of any run by its stable labels. The
 * cluster stores it (a real apiserver validates it too), and the pod of a run of the compiled binary
 * is exactly what its selector lists.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { LABEL } from "../../src/core/labels.ts";
import { buildAgentJob } from "../../src/deployer/job-spec.ts";
import { runLabels } from "../../src/run/labels.ts";
import { runNames } from "../../src/run/names.ts";
import { wireClient } from "../cluster/http-client.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { aicr, baseEnv, ROOT } from "../e2e/_aicr.ts";
import { useCluster } from "../support/cluster.ts";
import {
  AGENT_IMAGE,
  freshNamespace,
  runIdOf,
  runSnapshot,
  snapshotCluster,
  TEST_MS,
  untilNoRunObjects,
} from "./_harness.ts";

interface Policy {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    podSelector: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
    policyTypes: string[];
    ingress?: unknown[];
    egress: { to?: Record<string, unknown>[]; ports?: { protocol?: string; port?: number }[] }[];
  };
}

const FILE = join(ROOT, "examples/agent-networkpolicy.yaml");
const policy = parse(readFileSync(FILE, "utf8")) as Policy;
const selects = (labels: Record<string, string> | undefined) =>
  Object.entries(policy.spec.podSelector.matchLabels ?? {}).every(([k, v]) => labels?.[k] === v);

describe("examples/agent-networkpolicy.yaml", () => {
  test("a NetworkPolicy: no ingress at all, egress only to ipBlocks over TCP (the API server), no DNS", () => {
    expect(policy.apiVersion).toBe("networking.k8s.io/v1");
    expect(policy.kind).toBe("NetworkPolicy");
    // Both types listed: an Ingress type with no rule denies every connection to the pod.
    expect([...policy.spec.policyTypes].sort()).toEqual(["Egress", "Ingress"]);
    expect(policy.spec.ingress ?? []).toEqual([]);
    expect(policy.spec.egress.length).toBeGreaterThan(0);
    for (const rule of policy.spec.egress) {
      // A rule without `to` or `ports` would allow every destination or every port.
      expect(rule.to?.length).toBeGreaterThan(0);
      expect(rule.ports?.length).toBeGreaterThan(0);
      for (const peer of rule.to ?? []) expect(Object.keys(peer)).toEqual(["ipBlock"]);
      for (const port of rule.ports ?? []) {
        expect(port.protocol).toBe("TCP");
        expect(port.port).not.toBe(53);
      }
    }
  });

  test("it selects the agent pod of any run by the labels every run carries, never by run or invocation", () => {
    const matchLabels = policy.spec.podSelector.matchLabels ?? {};
    expect(policy.spec.podSelector.matchExpressions).toBeUndefined();
    expect(matchLabels).toEqual({ [LABEL.name]: "aicr", [LABEL.component]: "snapshot-agent" });
    for (const [runId, invocationId] of [
      ["20260101-000000-0000000000000001", "a".repeat(32)],
      ["20261231-235959-ffffffffffffffff", "b".repeat(32)],
    ] as const) {
      const names = runNames({ runId });
      for (const privileged of [true, false]) {
        const job = buildAgentJob({
          names,
          namespace: "gpu-operator",
          labels: runLabels({ runId, invocationId }),
          runId,
          image: AGENT_IMAGE,
          serviceAccountName: names.serviceAccount,
          output: `cm://gpu-operator/${names.stagingConfigMap}`,
          outputIsStaging: true,
          privileged,
        });
        expect(selects(job.spec.template.metadata.labels)).toBe(true);
      }
    }
    // Another component's pods (the validators') are not the agent.
    expect(selects(runLabels({ runId: "r", invocationId: "i" }, "validator"))).toBe(false);
  });
});

for (const backend of BACKENDS)
  describe(`[${backend}] the policy in a cluster, and a run of the binary`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });

    test(
      "stored as written; its selector lists exactly the agent pod of an --no-privileged run, on the pod network",
      async () => {
        const ns = await freshNamespace(cluster(), "netpol");
        const api = wireClient(cluster(), "admin");
        const path = `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`;
        const created = await api.post(path, policy);
        expect(created.status, created.text).toBe(201);
        const stored = await api.get(`${path}/${policy.metadata.name}`);
        expect(stored.status).toBe(200);
        expect(stored.body.spec.podSelector).toEqual(policy.spec.podSelector);
        expect(stored.body.spec.egress).toEqual(policy.spec.egress);

        const r = await runSnapshot(admin, [
          "-n",
          ns,
          "--image",
          AGENT_IMAGE,
          "--no-privileged",
          "--no-cleanup",
        ]);
        expect(r.code, r.stderr).toBe(0);
        const runId = runIdOf(r.stderr);
        try {
          const selector = Object.entries(stored.body.spec.podSelector.matchLabels as Record<string, string>)
            .map(([k, v]) => `${k}=${v}`)
            .join(",");
          const pods = await api.get(
            `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`,
          );
          expect(pods.status).toBe(200);
          const items = pods.body.items as {
            metadata: { labels: Record<string, string> };
            spec: Record<string, unknown>;
          }[];
          expect(items.length).toBe(1);
          expect(items[0]?.metadata.labels[LABEL.runId]).toBe(runId);
          // On the pod network: a NetworkPolicy applies to it (the privileged agent's host network is exempt).
          expect(items[0]?.spec.hostNetwork).toBeUndefined();
        } finally {
          // The kept run removed as an operator would (async: the fake apiserver answers in this process).
          const removed = await aicr(["runs", "delete", runId, "-n", ns, "--yes", "--force"], {
            env: baseEnv({ KUBECONFIG: admin }),
          });
          expect(removed.code, removed.stderr).toBe(0);
          await api.delete(`${path}/${policy.metadata.name}`);
        }
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );
  });

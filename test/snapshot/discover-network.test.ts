/**
 * `aicr snapshot --discover-network` in remote mode against a cluster whose agent runs over the
 * InfiniBand fixture host: the result carries NetworkTopology, and the run's ClusterRole holds only
 * the documented read rules — its ServiceAccount may not patch nodes or exec into pods.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { KubeClient } from "../../src/kube/client.ts";
import { CLUSTER_BASELINE_RULES, DISCOVER_NETWORK_RULES, toPolicyRule } from "../../src/rbac/rules.ts";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { processRuntime } from "../cluster/controllers/process-runtime.ts";
import { node } from "../cluster/nodes.ts";
import { resource } from "../cluster/resources.ts";
import { BACKENDS, type Backend, startTestCluster } from "../cluster/testbed.ts";
import { AICR, ensureBuilt, ROOT } from "../e2e/_aicr.ts";
import { useCluster } from "../support/cluster.ts";
import { untilStore } from "../support/until.ts";
import {
  AGENT_IMAGE,
  freshNamespace,
  H100_BIN,
  runIdOf,
  runSnapshot,
  STUCK_MS,
  TEST_MS,
  untilNoRunObjects,
} from "./_harness.ts";

const IB_ROOT = join(ROOT, "test/fixtures/hosts/network-ib-node");

/** One GPU node whose agent reads the InfiniBand fixture host. */
async function networkCluster(backend: Backend = "fake") {
  await ensureBuilt();
  return startTestCluster(backend, {
    nodes: [node("gpu-node-1", { gpus: 4 })],
    runtime: (api) =>
      processRuntime({
        images: { [AGENT_IMAGE]: AICR },
        kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
        baseEnv: { PATH: `${H100_BIN}:${process.env.PATH}`, AICR_HOST_ROOT: IB_ROOT, NO_COLOR: "1" },
      }),
  });
}

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: networkCluster });
    let admin: string;
    let client: KubeClient;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
      client = KubeClient.connect({ kubeconfig: admin, env: {} });
    });
    afterAll(() => client?.close());

    test(
      "NetworkTopology in the result; the ClusterRole only reads; the agent may not patch nodes or exec",
      async () => {
        const ns = await freshNamespace(cluster(), "discover");
        const r = await runSnapshot(admin, [
          "-n",
          ns,
          "--image",
          AGENT_IMAGE,
          "--discover-network",
          "--no-cleanup",
        ]);
        expect(r.code, r.stderr).toBe(0);
        const runId = runIdOf(r.stderr);
        const doc = parseSnapshot(r.stdout, "stdout");
        const network = doc.measurements.find((m) => m.type === "NetworkTopology");
        const ib = network?.subtypes.find((s) => s.subtype === "nic-15b3-1021-infiniband");
        expect(ib?.data).toMatchObject({ fabric: "infiniband", "pf-count": 4, model: "ConnectX-7" });
        expect(network?.subtypes.map((s) => s.subtype)).toContain("gpu-nic-affinity");

        const name = `aicr-node-reader-${runId}`;
        const role = (await untilStore(
          cluster(),
          () => cluster().store.find(resource("clusterroles"), undefined, name),
          `ClusterRole ${name}`,
          STUCK_MS,
        )) as { rules?: unknown[] };
        expect(role.rules).toEqual([...CLUSTER_BASELINE_RULES, ...DISCOVER_NETWORK_RULES].map(toPolicyRule));
        for (const rule of role.rules as { verbs: string[] }[])
          for (const verb of rule.verbs) expect(["get", "list"]).toContain(verb);

        const binding = (await untilStore(
          cluster(),
          () => cluster().store.find(resource("clusterrolebindings"), undefined, name),
          `ClusterRoleBinding ${name}`,
          STUCK_MS,
        )) as { subjects?: { name: string; namespace: string }[] };
        const sa = binding.subjects?.[0];
        const subject = {
          user: `system:serviceaccount:${sa?.namespace}:${sa?.name}`,
          groups: [
            "system:serviceaccounts",
            `system:serviceaccounts:${sa?.namespace}`,
            "system:authenticated",
          ],
        };
        const may = async (check: Parameters<KubeClient["review"]>[0]) =>
          (await client.review(check, subject)).allowed;
        expect(
          await may({ verb: "list", group: "configuration.net.nvidia.com", resource: "nicdevices" }),
        ).toBe(true);
        expect(await may({ verb: "get", group: "mellanox.com", resource: "nicclusterpolicies" })).toBe(true);
        expect(await may({ verb: "patch", group: "", resource: "nodes" })).toBe(false);
        expect(
          await may({ verb: "create", group: "", resource: "pods", subresource: "exec", namespace: ns }),
        ).toBe(false);
        expect(await may({ verb: "patch", group: "mellanox.com", resource: "nicclusterpolicies" })).toBe(
          false,
        );
        expect(
          await may({ verb: "create", group: "apiextensions.k8s.io", resource: "customresourcedefinitions" }),
        ).toBe(false);

        await cluster().store.delete(resource("clusterroles"), undefined, name, {});
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );
  });

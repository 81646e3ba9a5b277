/**
 * A ConfigMap delivery against the fake apiserver, at the HTTP boundary: a transient failure of the
 * server-side apply is retried, and a cancel ends the retries.
 */
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { KubeClient } from "../../../src/kube/client.ts";
import { type DeliverOptions, deliverSnapshot, parseDestination } from "../../../src/snapshot/deliver.ts";
import { resource } from "../../cluster/resources.ts";
import { CLUSTER_HOOK_MS, startTestCluster, type TestCluster } from "../../cluster/testbed.ts";
import { until } from "../../support/until.ts";

const NS = "deliver";

let cluster: TestCluster;
const clients: KubeClient[] = [];

beforeAll(async () => {
  cluster = await startTestCluster("fake", { controllers: false });
  await cluster.store.create(resource("namespaces"), { metadata: { name: NS } });
}, CLUSTER_HOOK_MS);
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
afterAll(() => cluster?.stop(), CLUSTER_HOOK_MS);

function options(extra: Partial<DeliverOptions> = {}): DeliverOptions {
  const client = KubeClient.connect({ kubeconfig: cluster.kubeconfigFor("admin"), env: {} });
  clients.push(client);
  return {
    content: "kind: Snapshot\n",
    format: "yaml",
    timestamp: "2025-01-01T00:00:00Z",
    version: "test",
    client,
    writeStdout: () => {},
    ...extra,
  };
}

test("a 503 on the apply is retried, and the ConfigMap is written", async () => {
  const path = `/api/v1/namespaces/${NS}/configmaps/retried`;
  const fault = cluster.faults.add({ method: "PATCH", path, status: 503 });
  try {
    await deliverSnapshot(parseDestination(`cm://${NS}/retried`), options());
    expect(fault.fired).toBe(1);
    expect(cluster.log.entries.filter((e) => e.method === "PATCH" && e.path === path)).toHaveLength(2);
    expect(cluster.store.get(resource("configmaps"), NS, "retried")).toBeDefined();
  } finally {
    fault.remove();
  }
});

test("a cancel during a failing attempt ends the retries with the cancel's reason", async () => {
  const path = `/api/v1/namespaces/${NS}/configmaps/cancelled`;
  let release = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  const fault = cluster.faults.add({ method: "PATCH", path, status: 503, holdUntil: held, nth: 0 });
  try {
    const controller = new AbortController();
    const delivery = deliverSnapshot(
      parseDestination(`cm://${NS}/cancelled`),
      options({ signal: controller.signal }),
    );
    await until(() => fault.matched === 1, "the first apply to arrive");
    controller.abort(new Error("cancelled by SIGTERM"));
    release();
    await expect(delivery).rejects.toThrow("cancelled by SIGTERM");
    expect(fault.matched).toBe(1);
  } finally {
    fault.remove();
    release();
  }
});

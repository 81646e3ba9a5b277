import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { AicrError } from "../../src/core/errors.ts";
import { type CleanupOptions, cleanupLegacy, verdict } from "../../src/legacy/cleanup.ts";
import { type Cluster, startCluster } from "../cluster/server.ts";
import { resource } from "../cluster/store.ts";
import {
  adminClient,
  entry,
  exists,
  never,
  options,
  seedClusterScoped,
  seedNamespace,
  writesTo,
} from "./_seed.ts";

let cluster: Cluster;
beforeEach(async () => {
  cluster = await startCluster({ controllers: false });
});
afterEach(async () => {
  await cluster.stop();
});

const NS = "gpu-operator";
const run = (overrides: Partial<CleanupOptions> = {}) =>
  cleanupLegacy(adminClient(cluster), options(overrides));

describe("deleting with preconditions, and the modes that delete nothing", () => {
  test("an object changed between plan and delete is kept and reported; the run fails with INTERNAL", async () => {
    seedNamespace(cluster, NS);
    const { receipt } = await run({
      yes: false,
      // Runs after the plan is made and before any delete: someone edits the Role meanwhile.
      confirm: async (count) => {
        expect(count).toBe(6);
        cluster.store.mutate(resource("roles"), NS, "aicr", (r) => ({
          ...r,
          metadata: { ...r.metadata, labels: { edited: "yes" } },
        }));
        return true;
      },
    });
    const role = entry(receipt, "Role", "aicr", NS);
    expect(role.outcome).toBe("changed since planned");
    expect(role.error).toContain("Precondition failed");
    expect(exists(cluster, "roles", NS, "aicr")).toBe(true);
    expect(exists(cluster, "rolebindings", NS, "aicr")).toBe(false);
    const failure = verdict(receipt, never);
    expect(failure).toBeInstanceOf(AicrError);
    expect(failure?.code).toBe("INTERNAL");
    expect(failure?.message).toContain("1 changed since planned");
  });
  test("an object deleted by someone else meanwhile is already-gone, and the run succeeds", async () => {
    seedNamespace(cluster, NS);
    const { receipt } = await run({
      yes: false,
      confirm: async () => {
        cluster.store.delete(resource("serviceaccounts"), NS, "aicr-validator");
        return true;
      },
    });
    expect(entry(receipt, "ServiceAccount", "aicr-validator", NS).outcome).toBe("already-gone");
    expect(verdict(receipt, never)).toBeUndefined();
  });
  test("--dry-run reads and reviews access, and makes no other mutating request", async () => {
    seedNamespace(cluster, NS);
    seedClusterScoped(cluster, NS);
    cluster.log.clear();
    const { receipt, stage } = await run({ dryRun: true, yes: false, includeConfigMaps: true });
    expect(stage).toBe("plan");
    expect(receipt.entries.filter((e) => e.outcome === "planned").length).toBe(10);
    expect(writesTo(cluster)).toEqual([]);
    expect(cluster.log.entries.some((e) => e.method === "DELETE")).toBe(false);
    expect(exists(cluster, "jobs", NS, "aicr")).toBe(true);
  });
  test("a declined prompt deletes nothing", async () => {
    seedNamespace(cluster, NS);
    cluster.log.clear();
    const err = await run({ yes: false, confirm: async () => false }).catch((e: unknown) => e);
    expect((err as AicrError).code).toBe("CANCELED");
    expect(writesTo(cluster)).toEqual([]);
  });
  test("a failed delete is reported per object; the rest still go, and the run fails with INTERNAL", async () => {
    seedNamespace(cluster, NS);
    cluster.faults.add({
      method: "DELETE",
      path: `/api/v1/namespaces/${NS}/serviceaccounts/aicr`,
      status: 500,
      message: "etcd is down",
    });
    const { receipt } = await run();
    const failed = entry(receipt, "ServiceAccount", "aicr", NS);
    expect(failed.outcome).toBe("failed");
    expect(failed.error).toContain("etcd is down");
    expect(entry(receipt, "ServiceAccount", "aicr-validator", NS).outcome).toBe("deleted");
    expect(verdict(receipt, never)?.code).toBe("INTERNAL");
  });
});

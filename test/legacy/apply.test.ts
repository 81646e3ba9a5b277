import { describe, expect, test } from "bun:test";
import { AicrError } from "../../src/core/errors.ts";
import { type CleanupOptions, cleanupLegacy, verdict } from "../../src/legacy/cleanup.ts";
import { resource } from "../cluster/store.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import {
  adminClient,
  entry,
  exists,
  never,
  options,
  seedClusterScoped,
  seedNamespace,
  TEST_MS,
  untilGone,
  writesTo,
} from "./_seed.ts";

const NS = "gpu-operator";

for (const backend of BACKENDS)
  describe(`[${backend}] deleting with preconditions, and the modes that delete nothing`, () => {
    const cluster = useCluster(backend, { per: "test", controllers: false });
    const run = (overrides: Partial<CleanupOptions> = {}) =>
      cleanupLegacy(adminClient(cluster()), options(overrides));

    test(
      "an object changed between plan and delete is kept and reported; the run fails with INTERNAL",
      async () => {
        await seedNamespace(cluster(), NS);
        const { receipt } = await run({
          yes: false,
          // Runs after the plan is made and before any delete: someone edits the Role meanwhile.
          confirm: async (count) => {
            expect(count).toBe(6);
            await cluster().store.mutate(resource("roles"), NS, "aicr", (r) => ({
              ...r,
              metadata: { ...r.metadata, labels: { edited: "yes" } },
            }));
            return true;
          },
        });
        const role = entry(receipt, "Role", "aicr", NS);
        expect(role.outcome).toBe("changed since planned");
        // The apiserver's refusal of the stale resourceVersion precondition, relayed. (kube-apiserver: "the
        // ResourceVersion in the precondition (…) does not match the ResourceVersion in record (…)".)
        expect(role.error).toMatch(/ResourceVersion in (the )?precondition/);
        expect(exists(cluster(), "roles", NS, "aicr")).toBe(true);
        await untilGone(cluster(), "rolebindings", NS, "aicr");
        const failure = verdict(receipt, never);
        expect(failure).toBeInstanceOf(AicrError);
        expect(failure?.code).toBe("INTERNAL");
        expect(failure?.message).toContain("1 changed since planned");
      },
      TEST_MS,
    );
    test(
      "an object deleted by someone else meanwhile is already-gone, and the run succeeds",
      async () => {
        await seedNamespace(cluster(), NS);
        const { receipt } = await run({
          yes: false,
          confirm: async () => {
            await cluster().store.delete(resource("serviceaccounts"), NS, "aicr-validator");
            return true;
          },
        });
        expect(entry(receipt, "ServiceAccount", "aicr-validator", NS).outcome).toBe("already-gone");
        expect(verdict(receipt, never)).toBeUndefined();
      },
      TEST_MS,
    );
    test(
      "--dry-run reads and reviews access, and makes no other mutating request",
      async () => {
        await seedNamespace(cluster(), NS);
        await seedClusterScoped(cluster(), NS);
        cluster().log.clear();
        const { receipt, stage } = await run({ dryRun: true, yes: false, includeConfigMaps: true });
        expect(stage).toBe("plan");
        expect(receipt.entries.filter((e) => e.outcome === "planned").length).toBe(10);
        expect(writesTo(cluster())).toEqual([]);
        expect(cluster().log.entries.some((e) => e.method === "DELETE")).toBe(false);
        expect(exists(cluster(), "jobs", NS, "aicr")).toBe(true);
      },
      TEST_MS,
    );
    test(
      "a declined prompt deletes nothing",
      async () => {
        await seedNamespace(cluster(), NS);
        cluster().log.clear();
        const err = await run({ yes: false, confirm: async () => false }).catch((e: unknown) => e);
        expect((err as AicrError).code).toBe("CANCELED");
        expect(writesTo(cluster())).toEqual([]);
      },
      TEST_MS,
    );
    test(
      "a failed delete is reported per object; the rest still go, and the run fails with INTERNAL",
      async () => {
        await seedNamespace(cluster(), NS);
        cluster().faults.add({
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
      },
      TEST_MS,
    );
  });

/**
 * aicr runs list|delete against either backend: a --no-cleanup run and a SIGKILLed run are listed with
 * their objects and removed by `runs delete --yes`; an active run is refused without --force; without a
 * terminal and --yes, or with a bad run ID, nothing at all is sent.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { resource } from "../cluster/resources.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { aicr, baseEnv } from "../e2e/_aicr.ts";
import {
  AGENT_IMAGE,
  freshNamespace,
  HANGING_IMAGE,
  lastSeq,
  RUN_OBJECT_KINDS,
  runIdOf,
  runObjects,
  runSnapshot,
  STUCK_MS,
  snapshotCluster,
  spawnSnapshot,
  TEST_MS,
  untilNoRunObjects,
  untilNoRunPods,
  writes,
} from "../snapshot/_harness.ts";
import { useCluster } from "../support/cluster.ts";
import { requestsSince } from "../support/requests.ts";
import { until, untilStore } from "../support/until.ts";

interface ListedRun {
  runId: string;
  command: string;
  namespace?: string;
  job: string;
  podLive: boolean;
  anchors: string[];
  objects: { kind: string; namespace?: string; name: string; uid: string }[];
}

const VALID_BUT_ABSENT = "20200101-000000-0123456789abcdef";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });

    const runs = (args: string[]) => aicr(["runs", ...args], { env: baseEnv({ KUBECONFIG: admin }) });

    async function listed(): Promise<ListedRun[]> {
      const r = await runs(["list", "-A", "-o", "json"]);
      expect(r.code, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout) as { kind: string; runs: ListedRun[] };
      expect(doc.kind).toBe("RunList");
      return doc.runs;
    }

    const jobOf = (ns: string, runId: string) =>
      cluster()
        .store.list(resource("jobs"), { namespace: ns })
        .items.find((j) => j.metadata.labels?.["aicr.run/run-id"] === runId);

    /** Spawns a snapshot and SIGKILLs it once its Job exists; returns the run ID. */
    async function killedRun(ns: string, image: string): Promise<string> {
      const run = spawnSnapshot(admin, ["-n", ns, "--image", image]);
      const runId = String(
        await until(
          () => {
            const m = run.stderrSoFar().match(/runID=(\d{8}-\d{6}-[0-9a-f]{16})/);
            return m?.[1] ?? "";
          },
          "the run ID on stderr",
          STUCK_MS,
        ),
      );
      await untilStore(cluster(), () => jobOf(ns, runId) !== undefined, `the Job of run ${runId}`, STUCK_MS);
      run.proc.kill("SIGKILL");
      const r = await run.done;
      expect(r.code).not.toBe(0);
      return runId;
    }

    const jobDone = (ns: string, runId: string) =>
      untilStore(
        cluster(),
        () =>
          (
            jobOf(ns, runId)?.status as { conditions?: { type: string; status: string }[] } | undefined
          )?.conditions?.some((c) => c.type === "Complete" && c.status === "True"),
        `the Job of run ${runId} complete`,
        STUCK_MS,
      );

    test(
      "a --no-cleanup run and a SIGKILLed run are listed with their objects; runs delete --yes leaves nothing of them",
      async () => {
        const ns = await freshNamespace(cluster(), "runs-list");
        const kept = await runSnapshot(admin, ["-n", ns, "--image", AGENT_IMAGE, "--no-cleanup"]);
        expect(kept.code, kept.stderr).toBe(0);
        const keptId = runIdOf(kept.stderr);
        expect(kept.stderr).toContain(
          `remove them all with: aicr runs delete ${keptId} -n ${ns} (or: kubectl`,
        );
        const killedId = await killedRun(ns, AGENT_IMAGE);
        await jobDone(ns, killedId);
        // The real backend's mirror may lag behind the CLI's last create.
        await untilStore(
          cluster(),
          () => runObjects(cluster(), ns, keptId).length >= 7,
          "the kept run's objects",
          STUCK_MS,
        );

        const all = await listed();
        for (const id of [keptId, killedId]) {
          const run = all.find((r) => r.runId === id);
          expect(run, `run ${id} in ${JSON.stringify(all.map((r) => r.runId))}`).toBeDefined();
          expect(run?.command).toBe("snapshot");
          expect(run?.namespace).toBe(ns);
          expect(run?.anchors).toEqual([`aicr-node-reader-${id}`]);
          const kinds = new Set(run?.objects.map((o) => o.kind));
          // The staging ConfigMap carries no run label (its Job owns it): the other six kinds, and the pod.
          for (const kind of RUN_OBJECT_KINDS.filter((k) => k !== "ConfigMap"))
            expect(kinds.has(kind)).toBe(true);
          expect(run?.objects.every((o) => o.uid !== "")).toBe(true);
        }
        expect(all.find((r) => r.runId === keptId)?.job).toBe("complete");

        // The text form names both runs too.
        const text = await runs(["list", "-n", ns]);
        expect(text.code, text.stderr).toBe(0);
        expect(text.stdout).toContain(keptId);
        expect(text.stdout).toContain(killedId);
        expect(text.stdout).toContain(`ClusterRole/aicr-node-reader-${keptId}`);

        const since = lastSeq(cluster());
        const del = await runs(["delete", keptId, killedId, "-n", ns, "--yes", "-o", "json"]);
        expect(del.code, del.stderr).toBe(0);
        const receipt = JSON.parse(del.stdout) as {
          kind: string;
          runs: { runId: string; rows: { kind: string; name: string; action: string; outcome: string }[] }[];
        };
        expect(receipt.kind).toBe("RunDeleteReceipt");
        for (const id of [keptId, killedId]) {
          const rows = receipt.runs.find((r) => r.runId === id)?.rows ?? [];
          expect(rows.filter((r) => r.action === "delete")).toEqual([
            expect.objectContaining({
              kind: "ClusterRole",
              name: `aicr-node-reader-${id}`,
              outcome: "deleted",
            }),
          ]);
        }
        // Every write was a DELETE with the anchor's UID as its precondition.
        const deletes = writes(cluster(), since);
        expect(deletes.map((e) => e.method)).toEqual(["DELETE", "DELETE"]);
        for (const e of deletes)
          expect((e.body as { preconditions?: { uid?: string } }).preconditions?.uid).toMatch(
            /^[0-9a-f-]{36}$/,
          );

        await untilNoRunObjects(cluster(), ns);
        await untilNoRunPods(cluster(), ns);
        await untilStore(
          cluster(),
          () =>
            cluster().store.find(resource("configmaps"), ns, `aicr-agent-snapshot-${killedId}`) === undefined,
          "the killed run's staging ConfigMap collected",
          STUCK_MS,
        );
        const after = await listed();
        expect(after.filter((r) => r.runId === keptId || r.runId === killedId)).toEqual([]);
      },
      TEST_MS * 2,
    );

    test(
      "a run whose Job is still active is refused without --force (exit 2, nothing written); --dry-run writes nothing; --force removes it",
      async () => {
        const ns = await freshNamespace(cluster(), "runs-active");
        const runId = await killedRun(ns, HANGING_IMAGE);
        const all = await listed();
        expect(all.find((r) => r.runId === runId)?.job).toBe("active");

        const since = lastSeq(cluster());
        const refused = await runs(["delete", runId, "-n", ns, "--yes"]);
        expect(refused.code, refused.stderr).toBe(2);
        expect(refused.stderr).toContain("[CONFLICT]");
        expect(refused.stderr).toContain("--force");
        expect(writes(cluster(), since)).toEqual([]);

        const dry = await runs(["delete", runId, "-n", ns, "--dry-run", "--force", "-o", "json"]);
        expect(dry.code, dry.stderr).toBe(0);
        const plan = JSON.parse(dry.stdout) as {
          kind: string;
          runs: { rows: { name: string; action: string }[] }[];
        };
        expect(plan.kind).toBe("RunDeletePlan");
        expect(plan.runs[0]?.rows.filter((r) => r.action === "delete").map((r) => r.name)).toEqual([
          `aicr-node-reader-${runId}`,
        ]);
        expect(writes(cluster(), since)).toEqual([]);

        const forced = await runs(["delete", runId, "-n", ns, "--yes", "--force"]);
        expect(forced.code, forced.stderr).toBe(0);
        await untilNoRunObjects(cluster(), ns);
        await untilNoRunPods(cluster(), ns);
      },
      TEST_MS * 2,
    );

    test(
      "no terminal and no --yes: exit 2 before any request",
      async () => {
        const since = lastSeq(cluster());
        const r = await runs(["delete", VALID_BUT_ABSENT, "-A"]);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain("--yes");
        expect(requestsSince(cluster(), since)).toEqual([]);
      },
      TEST_MS,
    );

    test(
      "a bad run ID (alone or after a good one): exit 2, zero requests",
      async () => {
        const since = lastSeq(cluster());
        for (const args of [["nope"], [VALID_BUT_ABSENT, "20200101-000000-XYZ"], []]) {
          const r = await runs(["delete", ...args, "--yes"]);
          expect(r.code, r.stderr).toBe(2);
          expect(r.stderr).toContain("[INVALID_REQUEST]");
        }
        expect(requestsSince(cluster(), since)).toEqual([]);
        // A well-formed ID of no run: NOT_FOUND (exit 3), only reads.
        const absent = await runs(["delete", VALID_BUT_ABSENT, "-A", "--yes"]);
        expect(absent.code, absent.stderr).toBe(3);
        expect(writes(cluster(), since)).toEqual([]);
      },
      TEST_MS,
    );
  });

/**
 * The staging sweep through the binary: a run that never read its result keeps the ConfigMap at its
 * staging name when the Job it created is no longer the one standing, and its WARN names the Job, the
 * UID the run recorded and the UID found live — the fields the original's WARN carries.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { KObject } from "../cluster/objects.ts";
import { resource } from "../cluster/resources.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { untilStore } from "../support/until.ts";
import {
  freshNamespace,
  HANGING_IMAGE,
  put,
  STUCK_MS,
  snapshotCluster,
  spawnSnapshot,
  TEST_MS,
  untilNothingLeft,
} from "./_harness.ts";

const RUN_ID_LABEL = "aicr.run/run-id";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });

    test(
      "the run's Job replaced mid-run: the staging ConfigMap is kept, the WARN names job, jobUID and liveJobUID",
      async () => {
        const ns = await freshNamespace(cluster(), "staging-sweep");
        const jobs = () => cluster().store.list(resource("jobs"), { namespace: ns }).items;
        // Every read of a Job by name (cleanup's "does this run still hold its Job?") waits until the
        // Job has been replaced: the comparison is then ordered after the swap, without timing.
        let replaced!: () => void;
        const swapped = new Promise<void>((resolve) => {
          replaced = resolve;
        });
        const hold = cluster().faults.add({
          method: "GET",
          path: `/apis/batch/v1/namespaces/${ns}/jobs/*`,
          nth: 0,
          holdUntil: swapped,
        });
        const run = spawnSnapshot(admin, ["-n", ns, "--image", HANGING_IMAGE, "--log-json"]);
        let replacement: KObject | undefined;
        let staging: string | undefined;
        try {
          const original = await untilStore(
            cluster(),
            () => jobs().find((j) => j.metadata.labels?.[RUN_ID_LABEL]),
            "the run's Job",
            STUCK_MS,
          );
          const runId = original.metadata.labels?.[RUN_ID_LABEL] as string;
          const name = original.metadata.name as string;
          staging = `aicr-agent-snapshot-${runId}`;
          // A result at the staging name that the run never read (as its agent would have written it).
          await put(cluster(), "configmaps", {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: staging, namespace: ns, labels: { "app.kubernetes.io/name": "aicr" } },
            data: { "snapshot.yaml": "kind: Snapshot\n" },
          });
          // Someone deletes the Job (orphaning its pod) and creates another one at its name.
          await cluster().store.delete(resource("jobs"), ns, name, { propagationPolicy: "Orphan" });
          await untilStore(
            cluster(),
            () => !jobs().some((j) => j.metadata.name === name),
            "Job gone",
            STUCK_MS,
          );
          replacement = await put(cluster(), "jobs", {
            apiVersion: "batch/v1",
            kind: "Job",
            metadata: { name, namespace: ns },
            spec: {
              suspend: true,
              template: {
                spec: { restartPolicy: "Never", containers: [{ name: "other", image: "other:1" }] },
              },
            },
          });
          replaced();

          const r = await run.done;
          expect(r.code, r.stderr).not.toBe(0);
          expect(hold.fired).toBeGreaterThan(0);
          const lines = r.stderr
            .split("\n")
            .filter((l) => l.startsWith("{"))
            .map((l) => JSON.parse(l) as Record<string, unknown>);
          const warns = lines.filter((l) => String(l.msg).includes("ConfigMap at this run's staging name"));
          expect(warns.length, r.stderr).toBe(1);
          expect(warns[0]).toMatchObject({
            level: "warn",
            name: staging,
            namespace: ns,
            job: name,
            jobUID: original.metadata.uid,
            liveJobUID: replacement.metadata.uid,
          });
          // Kept: the ConfigMap and the stranger's Job are still there.
          expect(cluster().store.find(resource("configmaps"), ns, staging)).toBeDefined();
          expect(jobs().find((j) => j.metadata.name === name)?.metadata.uid).toBe(replacement.metadata.uid);
        } finally {
          replaced();
          hold.remove();
          if (run.proc.exitCode === null) run.proc.kill("SIGKILL");
          await run.done;
          if (replacement)
            await cluster().store.delete(resource("jobs"), ns, replacement.metadata.name as string, {
              propagationPolicy: "Background",
            });
          if (staging) await cluster().store.delete(resource("configmaps"), ns, staging, {});
          // The orphaned agent pod hangs until it is deleted.
          for (const pod of cluster().store.list(resource("pods"), { namespace: ns }).items)
            await cluster().store.delete(resource("pods"), ns, pod.metadata.name as string, {});
        }
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );
  });

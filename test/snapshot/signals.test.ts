/**
 * SIGINT in each phase: the run stops waiting, cleans up and exits 9, leaving nothing behind. The
 * phase is reached deterministically: a latency fault holds one request of that phase, and the
 * signal is sent once the fault has caught it (or the request log shows the phase began).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { FaultRule } from "../cluster/faults.ts";
import { resource } from "../cluster/resources.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { until } from "../support/until.ts";
import {
  AGENT_IMAGE,
  freshNamespace,
  HANGING_IMAGE,
  lastSeq,
  runIdOf,
  STUCK_MS,
  snapshotCluster,
  spawnSnapshot,
  TEST_MS,
  UNSTAMPED_IMAGE,
  untilNothingLeft,
  untilRequest,
  writes,
} from "./_harness.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });

    /** Held long enough that only the signal can end the phase; released by the cluster on its own later. */
    const HOLD_MS = 2000;

    /**
     * Runs the agent with one request of a phase held, interrupts once the hold caught it (and `reached`
     * resolved), and expects the cancelled run's exit. `hold.untilExit`: held until the run has exited
     * instead of for HOLD_MS — for a phase whose end would otherwise race with a wait of unknown length
     * (it must be a request the cancelled run does not wait for).
     */
    async function interruptAt(
      ns: string,
      image: string,
      hold: (Omit<FaultRule, "latencyMs" | "holdUntil"> & { untilExit?: boolean }) | undefined,
      reached?: (since: number, run: ReturnType<typeof spawnSnapshot>) => Promise<unknown>,
    ): Promise<{ code: number; stdout: string; stderr: string }> {
      let release = () => {};
      const exited = new Promise<void>((resolve) => {
        release = resolve;
      });
      const { untilExit, ...rule } = hold ?? { path: "" };
      const fault = hold
        ? cluster().faults.add({ ...rule, ...(untilExit ? { holdUntil: exited } : { latencyMs: HOLD_MS }) })
        : undefined;
      const since = lastSeq(cluster());
      try {
        const run = spawnSnapshot(admin, ["-n", ns, "--image", image]);
        if (fault)
          await until(() => fault.fired > 0, `the held ${hold?.method} ${String(hold?.path)}`, STUCK_MS);
        if (reached) await reached(since, run);
        run.proc.kill("SIGINT");
        const r = await run.done;
        expect(r.code, r.stderr).toBe(9);
        expect(r.stderr).toContain("received SIGINT: cancelling");
        expect(r.stderr).toContain("[CANCELED]");
        return r;
      } finally {
        release();
        fault?.remove();
      }
    }

    test(
      "SIGINT during the permission gate: exit 9, nothing was ever written",
      async () => {
        const ns = await freshNamespace(cluster(), "sig-gate");
        const since = lastSeq(cluster());
        const r = await interruptAt(ns, AGENT_IMAGE, {
          method: "POST",
          path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
          nth: 1,
          count: 1000,
        });
        expect(r.stderr).not.toContain("run objects created");
        expect(writes(cluster(), since)).toEqual([]);
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "SIGINT while the run objects are being created: exit 9, the created ones deleted, a late create collected",
      async () => {
        const ns = await freshNamespace(cluster(), "sig-create");
        const r = await interruptAt(ns, AGENT_IMAGE, {
          method: "POST",
          path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`,
        });
        expect(r.stderr).toContain("cleaned up");
        expect(r.stderr).not.toContain("deployed Job");
        // The held RoleBinding create commits after cleanup; it is owned by the deleted anchor.
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "SIGINT while waiting for the agent pod: exit 9, nothing left",
      async () => {
        const ns = await freshNamespace(cluster(), "sig-pod");
        const r = await interruptAt(ns, AGENT_IMAGE, {
          method: "GET",
          path: `/api/v1/namespaces/${ns}/pods`,
          nth: 1,
          count: 100,
        });
        expect(r.stderr).toContain("run objects created");
        expect(r.stderr).not.toContain("running on");
        expect(r.stderr).toContain("cleaned up");
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "SIGINT while waiting for the Job to complete (an agent that names no pod): exit 9, nothing left",
      async () => {
        const ns = await freshNamespace(cluster(), "sig-job");
        // An agent whose document names no pod leaves the run only the Job's condition to end on. The Job
        // watch opens right after the Job; held until the run exits (the agent may take any time to
        // start), the run can only end by the signal once the agent's log stream has begun.
        const r = await interruptAt(
          ns,
          UNSTAMPED_IMAGE,
          { method: "GET", path: `/apis/batch/v1/namespaces/${ns}/jobs`, untilExit: true },
          (since) =>
            untilRequest(
              cluster(),
              (e) =>
                e.seq > since &&
                e.path.startsWith(`/api/v1/namespaces/${ns}/pods/`) &&
                e.path.endsWith("/log"),
              "the agent log stream",
            ),
        );
        expect(r.stderr).toContain("running on gpu-node-1");
        expect(r.stderr).not.toMatch(/result (read|proven)/);
        expect(r.stderr).toContain("cleaned up");
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "SIGINT while the agent runs and its log streams: exit 9, the pod deleted, nothing left",
      async () => {
        const ns = await freshNamespace(cluster(), "sig-run");
        const line = "[agent] agent hanging until its pod is deleted";
        // Interrupted once the agent's first line has come through the log stream.
        const r = await interruptAt(ns, HANGING_IMAGE, undefined, (_since, run) =>
          until(() => run.stderrSoFar().includes(line), "the agent's first log line", STUCK_MS),
        );
        expect(r.stderr).toContain(line);
        expect(r.stderr).toContain("cleaned up");
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "SIGINT while the result is read: exit 9, no snapshot on stdout, nothing left",
      async () => {
        const ns = await freshNamespace(cluster(), "sig-result");
        // The result normally arrives as a watch event. That watch is held until the run has ended, so
        // the run reads the ConfigMap once its pod has ended (however long the agent takes) — and that
        // read is held too.
        let release = () => {};
        const released = new Promise<void>((resolve) => {
          release = resolve;
        });
        const watch = cluster().faults.add({
          method: "GET",
          path: `/api/v1/namespaces/${ns}/configmaps`,
          nth: 1,
          count: 1000,
          holdUntil: released,
        });
        const read = cluster().faults.add({
          method: "GET",
          path: new RegExp(`^/api/v1/namespaces/${ns}/configmaps/aicr-agent-snapshot-`),
          latencyMs: HOLD_MS,
        });
        try {
          const since = lastSeq(cluster());
          const r = await interruptAt(ns, AGENT_IMAGE, undefined, () =>
            until(() => read.fired >= 1, "the held result read", STUCK_MS),
          );
          expect(r.stdout).toBe("");
          expect(r.stderr).not.toMatch(/result (read|proven)/);
          // The held read was the run's own (the agent never reads its ConfigMap): every read of it, once
          // answered, is logged as the caller's.
          const reads = () =>
            cluster().log.entries.filter(
              (e) =>
                e.seq > since && e.method === "GET" && e.path.includes("/configmaps/aicr-agent-snapshot-"),
            );
          await until(() => reads().length >= read.matched, "the held read's log entry", STUCK_MS);
          expect(reads().map((e) => e.user)).toEqual(reads().map(() => "admin"));
          await untilNothingLeft(cluster(), ns);
        } finally {
          release();
          watch.remove();
          read.remove();
        }
      },
      TEST_MS,
    );

    test(
      "SIGINT during cleanup: cleanup finishes, exit 9, nothing left",
      async () => {
        const ns = await freshNamespace(cluster(), "sig-cleanup");
        const r = await interruptAt(ns, AGENT_IMAGE, {
          method: "DELETE",
          path: `/apis/batch/v1/namespaces/${ns}/jobs/*`,
        });
        expect(r.stderr).toContain("cleaned up");
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "a second SIGINT exits at once, printing what may be left and the one kubectl command that removes it",
      async () => {
        const ns = await freshNamespace(cluster(), "sig-twice");
        // Cleanup's deletes are held, so the second signal lands while the objects still stand.
        const fault = cluster().faults.add({ method: "DELETE", path: /.*/, latencyMs: HOLD_MS, nth: 0 });
        try {
          const run = spawnSnapshot(admin, ["-n", ns, "--image", HANGING_IMAGE]);
          await untilRequest(
            cluster(),
            (e) => e.path.startsWith(`/api/v1/namespaces/${ns}/pods/`) && e.path.endsWith("/log"),
            "the agent log stream",
          );
          run.proc.kill("SIGINT");
          await until(() => fault.fired > 0, "cleanup's held Job delete", STUCK_MS);
          const secondAt = cluster().log.entries.length;
          run.proc.kill("SIGINT");
          const r = await run.done;
          expect(r.code, r.stderr).toBe(9);
          const runId = runIdOf(r.stderr);
          // It did not wait for the held delete to be answered.
          expect(
            cluster()
              .log.entries.slice(secondAt)
              .some((e) => e.method === "DELETE" && e.path.includes("/jobs/")),
          ).toBe(false);
          expect(r.stderr).toContain("exiting without cleanup; this run may have left:");
          for (const kind of [
            "ClusterRole",
            "ClusterRoleBinding",
            "ServiceAccount",
            "Role",
            "RoleBinding",
            "Job",
          ])
            expect(r.stderr).toMatch(new RegExp(`\\n  ${kind} \\S*${runId} uid=[0-9a-f-]{36}`));
          const command = `kubectl delete clusterrole aicr-node-reader-${runId}`;
          expect(r.stderr).toContain(command);
          // The printed command removes everything: deleting the anchor lets the garbage collector take the rest.
          // (The dead process's held delete of it may land first; either way the anchor goes.)
          try {
            await cluster().store.delete(
              resource("clusterroles"),
              undefined,
              `aicr-node-reader-${runId}`,
              {},
            );
          } catch (err) {
            if ((err as { code?: number }).code !== 404) throw err;
          }
          await untilNothingLeft(cluster(), ns);
        } finally {
          fault.remove();
        }
      },
      TEST_MS,
    );

    test(
      "SIGTERM is handled as SIGINT: exit 9, nothing left",
      async () => {
        const ns = await freshNamespace(cluster(), "sig-term");
        const run = spawnSnapshot(admin, ["-n", ns, "--image", HANGING_IMAGE]);
        await untilRequest(
          cluster(),
          (e) => e.path.startsWith(`/api/v1/namespaces/${ns}/pods/`) && e.path.endsWith("/log"),
          "the agent log stream",
        );
        run.proc.kill("SIGTERM");
        const r = await run.done;
        expect(r.code, r.stderr).toBe(9);
        expect(r.stderr).toContain("received SIGTERM: cancelling");
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );
  });

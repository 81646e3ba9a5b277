/**
 * A run ends on proof (src/deployer/run-end.ts), not on the Job's condition: its pod's agent exited 0
 * and the output holds a document naming that pod. Each order in which those facts can arrive, and
 * each way they can fail to hold, on both backends; the isolation and cleanup checks of every other
 * run apply unchanged (nothing left, no other run's document).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { collectSnapshot, KubeClient } from "../../src/index.ts";
import type { FaultRule } from "../cluster/faults.ts";
import { resource } from "../cluster/resources.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { untilStore } from "../support/until.ts";
import {
  AGENT_IMAGE,
  FAILS_AFTER_WRITE_IMAGE,
  freshNamespace,
  HANGING_IMAGE,
  lastSeq,
  runIdOf,
  runSnapshot,
  STUCK_MS,
  snapshotCluster,
  spawnSnapshot,
  TEST_MS,
  UNSTAMPED_IMAGE,
  untilNoRunObjects,
  untilNothingLeft,
} from "./_harness.ts";

const STAGING = "aicr-agent-snapshot-";

for (const backend of BACKENDS)
  describe(`[${backend}] the run's end`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });

    /** The caller's own requests since `since` (the agents' and the controllers' left out). */
    const mine = (since: number) => cluster().log.entries.filter((e) => e.seq > since && e.user === "admin");
    /** The caller's reads of a result ConfigMap by name (not its watch). */
    const resultReads = (since: number, ns: string) =>
      mine(since).filter(
        (e) => e.method === "GET" && e.path.startsWith(`/api/v1/namespaces/${ns}/configmaps/`),
      );

    /** One run of the agent with a fault; `rule` may hold requests until the run has exited. */
    async function runWithFault(ns: string, rule: (exited: Promise<void>) => FaultRule) {
      const exited = Promise.withResolvers<void>();
      const hold = cluster().faults.add(rule(exited.promise));
      const since = lastSeq(cluster());
      try {
        const r = await runSnapshot(admin, ["-n", ns, "--image", AGENT_IMAGE]);
        return { r, fired: hold.fired, since };
      } finally {
        exited.resolve();
        hold.remove();
      }
    }

    /** Exit 0, this run's own document on stdout, ended on its proof. */
    function expectProven(r: { code: number; stdout: string; stderr: string }): void {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`run-id: "${runIdOf(r.stderr)}"`);
      expect(r.stderr).toContain("result proven");
    }

    test(
      "the agent's write arrives before its pod's end: proven from the watch event, no read",
      async () => {
        const ns = await freshNamespace(cluster(), "end-doc-first");
        // The run's pod watch is held until the agent's ConfigMap is in the store: the write's event
        // reaches the run first, the pod's end only after.
        const written = untilStore(
          cluster(),
          () =>
            cluster()
              .store.list(resource("configmaps"), { namespace: ns })
              .items.some((c) => c.metadata.name?.startsWith(STAGING) && c.data?.["snapshot.yaml"]),
          "the agent's ConfigMap",
          STUCK_MS,
        );
        const { r, fired, since } = await runWithFault(ns, () => ({
          method: "GET",
          path: `/api/v1/namespaces/${ns}/pods`,
          holdUntil: written,
        }));
        expect(fired).toBe(1);
        expectProven(r);
        expect(resultReads(since, ns)).toEqual([]);
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "the pod's end arrives before the agent's write is seen: one read proves it",
      async () => {
        const ns = await freshNamespace(cluster(), "end-exit-first");
        // The run's ConfigMap watch is held until the run has exited: the write is never seen as an event.
        const { r, fired, since } = await runWithFault(ns, (exited) => ({
          method: "GET",
          path: `/api/v1/namespaces/${ns}/configmaps`,
          holdUntil: exited,
        }));
        expect(fired).toBe(1);
        expectProven(r);
        expect(resultReads(since, ns)).toHaveLength(1);
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "a log stream that never answers does not hold the run open: proven, drained, closed, exit 0",
      async () => {
        const ns = await freshNamespace(cluster(), "end-log-held");
        const { r, fired } = await runWithFault(ns, (exited) => ({
          method: "GET",
          path: new RegExp(`^/api/v1/namespaces/${ns}/pods/[^/]+/log$`),
          holdUntil: exited,
        }));
        expect(fired).toBe(1);
        expectProven(r);
        expect(r.stderr).not.toContain("[agent]");
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "the agent fails after writing its snapshot: exit 8 with its cause, no snapshot, nothing left",
      async () => {
        const ns = await freshNamespace(cluster(), "end-fails-after");
        const r = await runSnapshot(admin, ["-n", ns, "--image", FAILS_AFTER_WRITE_IMAGE]);
        expect(r.code, r.stderr).toBe(8);
        expect(r.stdout).toBe("");
        expect(r.stderr).toContain("[agent] snapshot written");
        expect(r.stderr).toContain("exit code 3");
        expect(r.stderr).toContain("agent failed after writing its snapshot");
        expect(r.stderr).not.toContain("result proven");
        expect(r.stderr).toContain("cleaned up");
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "an agent whose document names no pod (the Go original's): the run ends on the Job's condition",
      async () => {
        const ns = await freshNamespace(cluster(), "end-unstamped");
        const r = await runSnapshot(admin, ["-n", ns, "--image", UNSTAMPED_IMAGE]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain(`run-id: "${runIdOf(r.stderr)}"`);
        expect(r.stdout).not.toContain("pod-uid:");
        expect(r.stderr).toContain("result read");
        expect(r.stderr).not.toContain("result proven");
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "the pod watch is cut after its first event: the run lists again and still proves its result",
      async () => {
        const ns = await freshNamespace(cluster(), "end-cut");
        const { r, fired, since } = await runWithFault(ns, () => ({
          method: "GET",
          path: `/api/v1/namespaces/${ns}/pods`,
          cutWatchAfterEvents: 1,
        }));
        expect(fired).toBe(1);
        expectProven(r);
        // After the cut watch: a list of the run's pods, then a watch from it.
        const podWatches = mine(since)
          .filter((e) => e.path === `/api/v1/namespaces/${ns}/pods`)
          .map((e) => e.query.watch === "true");
        expect(podWatches.slice(podWatches.indexOf(true))).toEqual([true, false, true]);
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "the pod is deleted while its agent runs: the run fails with that pod's end, whatever the Job does next",
      async () => {
        const ns = await freshNamespace(cluster(), "end-replaced");
        const run = spawnSnapshot(admin, ["-n", ns, "--image", HANGING_IMAGE, "--timeout", "1m"]);
        await untilStore(
          cluster(),
          () =>
            cluster()
              .store.list(resource("pods"), { namespace: ns })
              .items.some((p) => p.status?.containerStatuses?.[0]?.state?.running),
          "the agent's container running",
          STUCK_MS,
        );
        const pod = cluster().store.list(resource("pods"), { namespace: ns }).items[0]!;
        await cluster().store.delete(resource("pods"), ns, pod.metadata.name!);
        const r = await run.done;
        expect(r.code, r.stderr).toBe(8);
        expect(r.stdout).toBe("");
        expect(r.stderr).toContain("the agent Job failed");
        expect(r.stderr).toContain("cleaned up");
        await untilNothingLeft(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "twin runs delivering to one ConfigMap: each proves its own write, neither returns the other's",
      async () => {
        const ns = await freshNamespace(cluster(), "end-twins");
        const client = () => KubeClient.connect({ kubeconfig: admin, env: {} });
        const delivered = { namespace: ns, name: "shared-snapshot" };
        const [a, b] = await Promise.all([
          collectSnapshot({ client: client(), namespace: ns, image: AGENT_IMAGE, delivered }),
          collectSnapshot({ client: client(), namespace: ns, image: AGENT_IMAGE, delivered }),
        ]);
        expect(a.runId).not.toBe(b.runId);
        expect(a.document.metadata["run-id"]).toBe(a.runId);
        expect(b.document.metadata["run-id"]).toBe(b.runId);
        expect(a.document.metadata["pod-uid"]).not.toBe(b.document.metadata["pod-uid"]);
        // The user's ConfigMap stays, holding one of the two.
        const kept = cluster().store.find(resource("configmaps"), ns, "shared-snapshot");
        expect([a.runId, b.runId].some((id) => kept?.data?.["snapshot.yaml"]?.includes(id))).toBe(true);
        await untilNoRunObjects(cluster(), ns, a.runId);
        await untilNoRunObjects(cluster(), ns, b.runId);
      },
      TEST_MS,
    );
  });

/** Ctrl-C during a running check: the run stops waiting, cleans up what it created, and exits 9. */
import { describe, expect, test } from "bun:test";
import { HANGING_TAG } from "../cluster/gpu-operator.ts";
import { resource } from "../cluster/resources.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { AICR, baseEnv, ensureBuilt } from "../e2e/_aicr.ts";
import { useCluster } from "../support/cluster.ts";
import { untilStore } from "../support/until.ts";
import { LONG, NS, runId, SAMPLE_RECIPE, SNAPSHOT, untilRunGone, validationCluster } from "./_harness.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { hookMs: LONG, start: validationCluster });

    test(
      "SIGINT while the validator pods run: cleanup deletes every object of the run, exit 9",
      async () => {
        await ensureBuilt();
        const id = runId("5");
        const proc = Bun.spawn(
          [
            AICR,
            "validate",
            "-r",
            SAMPLE_RECIPE,
            "-s",
            SNAPSHOT,
            "-k",
            cluster().kubeconfigFor("admin"),
            "-n",
            NS,
            "--run-id",
            id,
            "--image",
            `validator:${HANGING_TAG}`,
            "--timeout",
            "10m",
          ],
          { env: baseEnv(), stdout: "pipe", stderr: "pipe", stdin: "ignore" },
        );
        const running = () =>
          cluster()
            .store.list(resource("pods"), { namespace: NS, labelSelector: `aicr.run/run-id=${id}` })
            .items.filter((p) => (p.status as { phase?: string } | undefined)?.phase === "Running").length ===
          3;
        await untilStore(cluster(), running, "the three validator pods Running", 120_000).catch((e) => {
          proc.kill("SIGKILL");
          throw e;
        });
        proc.kill("SIGINT");
        const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
        expect({ code, stderr: code === 9 ? "" : stderr }).toEqual({ code: 9, stderr: "" });
        expect(stderr).toContain("received SIGINT: cancelling");
        expect(stderr).toContain("validation objects cleaned up deleted=10");
        await untilRunGone(cluster(), NS, id);
      },
      LONG,
    );
  });

/**
 * GPU auto-targeting through the binary (src/remote/auto-target.ts): the node look-up is bounded at
 * 5 s and fails open — a look-up that never answers is warned about and the run goes on without a
 * node selector — and a snapshot with no GPU data from a cluster whose nodes say they have GPUs ends
 * with the placement-mismatch WARN. The look-up is held by a fault until the test ends (no timing
 * decides the outcome); the one time assertion is the code's own bound, as a lower bound.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { processRuntime } from "../cluster/controllers/process-runtime.ts";
import { node } from "../cluster/nodes.ts";
import { BACKENDS, type Backend, startTestCluster } from "../cluster/testbed.ts";
import { AICR, ensureBuilt, ROOT } from "../e2e/_aicr.ts";
import { useCluster } from "../support/cluster.ts";
import {
  AGENT_IMAGE,
  type Cluster,
  freshNamespace,
  H100_BIN,
  H100_ROOT,
  lastSeq,
  runSnapshot,
  spawnSnapshot,
  TEST_MS,
  untilNoRunObjects,
  untilRequest,
  writes,
} from "./_harness.ts";

/** dist/aicr over the CPU host fixture, no nvidia-smi: a node without GPUs. */
const CPU_ONLY_IMAGE = "ghcr.io/nvidia/aicr:cpu-only";
const LOOKUP_BOUND_MS = 5000;
const MISMATCH = "snapshot has no GPU data but cluster topology shows GPU-capable nodes";
const UNANSWERED = `GPU node look-up did not answer within ${LOOKUP_BOUND_MS / 1000}s; running without a node selector`;

/** A GPU node (labelled nvidia.com/gpu.present=true) and a CPU node; two agent images. */
async function autoTargetCluster(backend: Backend): Promise<Cluster> {
  await ensureBuilt();
  return startTestCluster(backend, {
    nodes: [node("gpu-node-1", { gpus: 8 }), node("cpu-node-1")],
    runtime: (api) =>
      processRuntime({
        images: {
          [AGENT_IMAGE]: AICR,
          [CPU_ONLY_IMAGE]: join(ROOT, "test/fixtures/agents/cpu-only"),
        },
        kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
        baseEnv: { PATH: `${H100_BIN}:${process.env.PATH}`, AICR_HOST_ROOT: H100_ROOT, NO_COLOR: "1" },
      }),
  });
}

/** The pod template's nodeSelector of every Job created in `ns` since request `since`. */
const jobSelectors = (cluster: Cluster, ns: string, since: number) =>
  writes(cluster, since)
    .filter((e) => e.method === "POST" && e.path === `/apis/batch/v1/namespaces/${ns}/jobs`)
    .map(
      (e) =>
        (e.body as { spec: { template: { spec: { nodeSelector?: Record<string, string> } } } }).spec.template
          .spec.nodeSelector,
    );

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: autoTargetCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });

    test(
      "a GPU node look-up that never answers: after the 5 s bound a WARN, and the run goes on without a node selector",
      async () => {
        const ns = await freshNamespace(cluster(), "auto-slow");
        let release!: () => void;
        const released = new Promise<void>((resolve) => {
          release = resolve;
        });
        // The first node list is the look-up (the agent reads nodes only after it is deployed).
        const hold = cluster().faults.add({ method: "GET", path: "/api/v1/nodes", holdUntil: released });
        const since = lastSeq(cluster());
        const started = performance.now();
        const run = spawnSnapshot(admin, ["-n", ns, "--image", AGENT_IMAGE]);
        try {
          await untilRequest(
            cluster(),
            (e) => e.seq > since && e.method === "POST" && e.path === `/apis/batch/v1/namespaces/${ns}/jobs`,
            "the agent Job's create",
          );
          // Nothing answered the look-up, so the Job cannot have been sent before the bound passed.
          expect(performance.now() - started).toBeGreaterThanOrEqual(LOOKUP_BOUND_MS - 100);
          const r = await run.done;
          expect(r.code, r.stderr).toBe(0);
          expect(hold.fired).toBe(1);
          const warn = r.stderr.indexOf(UNANSWERED);
          expect(warn, r.stderr).toBeGreaterThanOrEqual(0);
          expect(r.stderr.slice(0, warn)).toMatch(/WARN[^\n]*$/);
          // The run went on after it: the agent was deployed and its log relayed later.
          expect(r.stderr.indexOf("[agent]", warn)).toBeGreaterThan(warn);
          expect(r.stderr).not.toContain("auto-targeting GPU nodes");
          expect(jobSelectors(cluster(), ns, since)).toEqual([undefined]);
          expect(r.stderr).not.toContain(MISMATCH);
        } finally {
          release();
          hold.remove();
          if (run.proc.exitCode === null) run.proc.kill("SIGKILL");
          await run.done;
        }
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "a look-up that answers: the GPU selector is injected and said (the control for the above)",
      async () => {
        const ns = await freshNamespace(cluster(), "auto-fast");
        const since = lastSeq(cluster());
        const r = await runSnapshot(admin, ["-n", ns, "--image", AGENT_IMAGE]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toContain("auto-targeting GPU nodes: node selector nvidia.com/gpu.present=true");
        expect(r.stderr).not.toContain(UNANSWERED);
        expect(jobSelectors(cluster(), ns, since)).toEqual([{ "nvidia.com/gpu.present": "true" }]);
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "no GPU data from a cluster whose nodes say they have GPUs: the placement-mismatch WARN with the fix",
      async () => {
        const ns = await freshNamespace(cluster(), "auto-mismatch");
        const r = await runSnapshot(admin, [
          "-n",
          ns,
          "--image",
          CPU_ONLY_IMAGE,
          "--node-selector",
          "kubernetes.io/hostname=cpu-node-1",
        ]);
        expect(r.code, r.stderr).toBe(0);
        const line = r.stderr.split("\n").find((l) => l.includes(MISMATCH));
        expect(line, r.stderr).toBeDefined();
        expect(line).toMatch(/WARN/);
        expect(r.stderr).toContain("--node-selector nvidia.com/gpu.present=true");
        expect(r.stdout).toContain("nvidia.com/gpu.present");
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );
  });

/**
 * aicr snapshot --all-nodes on the fake cluster with 50 GPU nodes: one tainted (NoSchedule: the agent's
 * default toleration covers it, so it is captured), one the agent cannot be scheduled on (too little
 * memory for its request), one whose agent fails — 48 snapshots, 2 failures. Three nodes run the real binary over
 * the H100 fixture host; the others the near-instant agent (test/support/instant-agent.ts: the agent's contract: it
 * writes its staging ConfigMap, owned by its Job).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processRuntime } from "../cluster/controllers/process-runtime.ts";
import type { RunContext } from "../cluster/controllers/runtime.ts";
import { node } from "../cluster/nodes.ts";
import { resource } from "../cluster/resources.ts";
import { BACKENDS, startTestCluster } from "../cluster/testbed.ts";
import { AICR, aicr, ensureBuilt } from "../e2e/_aicr.ts";
import { instantAgent, snapshotTemplate } from "../support/instant-agent.ts";
import {
  AGENT_IMAGE,
  type Cluster,
  freshNamespace,
  H100_BIN,
  H100_ROOT,
  lastSeq,
  runSnapshot,
  SETUP_MS,
  TEST_MS,
  untilNoRunObjects,
  writes,
} from "./_harness.ts";

const N = 50;
const names = Array.from({ length: N }, (_, i) => `gpu-${String(i).padStart(2, "0")}`);
const REAL = new Set(["gpu-00", "gpu-01", "gpu-02"]);
const TAINTED = "gpu-10";
const SMALL = "gpu-20";
const FAILING = "gpu-30";

let cluster: Cluster;
let kubeconfig: string;

beforeAll(async () => {
  await ensureBuilt();
  const template = await snapshotTemplate();
  let self: Cluster | undefined;
  cluster = await startTestCluster("fake", {
    nodes: names.map((n) => {
      return node(n, {
        gpus: 8,
        ...(n === TAINTED
          ? { taints: [{ key: "dedicated", value: "infra", effect: "NoSchedule" as const }] }
          : {}),
        // The privileged agent requests 4Gi of memory: this node can never take it.
        ...(n === SMALL ? { memory: "2Gi" } : {}),
      });
    }),
    runtime: (api) => {
      const real = processRuntime({
        images: { [AGENT_IMAGE]: AICR },
        kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
        baseEnv: { PATH: `${H100_BIN}:${process.env.PATH}`, AICR_HOST_ROOT: H100_ROOT, NO_COLOR: "1" },
      });
      const instant = instantAgent(() => self as Cluster, template);
      return {
        run: (ctx: RunContext) => {
          const at = (ctx.pod.spec as { nodeName?: string }).nodeName ?? "";
          if (at === FAILING)
            return Promise.resolve({ exitCode: 1, message: "collector GPU failed: nvidia-smi not found" });
          return REAL.has(at) ? real.run(ctx) : instant(ctx);
        },
        close: () => real.close?.() ?? Promise.resolve(),
      };
    },
  });
  self = cluster;
  kubeconfig = cluster.kubeconfigFor("admin");
}, SETUP_MS);

afterAll(() => cluster?.stop());

/** aicr snapshot --all-nodes in namespace `ns` with the test agent image, and `args`. */
const fleetRun = (ns: string, args: string[]) =>
  runSnapshot(kubeconfig, ["-n", ns, "--all-nodes", "--image", AGENT_IMAGE, ...args]);

const watchesSince = (from: number) =>
  cluster.log.entries.filter((e) => e.seq > from && e.query.watch === "true");

describe("aicr snapshot --all-nodes (fake, 50 GPU nodes)", () => {
  test(
    "48 snapshots written, fleet.json names the 2 failures with their causes, exit 8, nothing left, constant watches",
    async () => {
      const ns = await freshNamespace(cluster, "fleet");
      const out = join(await mkdtemp(join(tmpdir(), "aicr-fleet-")), "out/");
      const from = lastSeq(cluster);
      const r = await fleetRun(ns, ["--parallelism", "16", "-o", out]);
      expect(r.stderr).toContain("2 of 50 nodes failed");
      expect(r.code).toBe(8);
      const files = (await readdir(out)).sort();
      expect(files.filter((f) => f.endsWith(".yaml"))).toHaveLength(48);
      // The tainted node is captured: the default toleration covers every taint.
      expect(files).toContain(`${TAINTED}.yaml`);
      expect(files).toContain("fleet.json");
      for (const bad of [SMALL, FAILING]) expect(files).not.toContain(`${bad}.yaml`);
      const real = await readFile(join(out, "gpu-01.yaml"), "utf8");
      expect(real).toContain("source-node: gpu-01");
      const report = JSON.parse(await readFile(join(out, "fleet.json"), "utf8"));
      expect(report).toMatchObject({ kind: "FleetSnapshot", nodes: 50, ok: 48, failed: 2 });
      const failed = Object.fromEntries(
        report.results
          .filter((x: { status: string }) => x.status === "failed")
          .map((x: { node: string; error: unknown }) => [x.node, x.error]),
      );
      expect(Object.keys(failed).sort()).toEqual([SMALL, FAILING]);
      expect(failed[SMALL].message).toContain("Insufficient memory");
      expect(failed[FAILING].message).toContain("nvidia-smi not found");
      expect(failed[FAILING].message).toContain("exit code 1");
      // Each node: its Job's create; each ok node: its result's read. Watches: one per kind, not per node.
      const since = cluster.log.entries.filter((e) => e.seq > from);
      expect(since.filter((e) => e.method === "POST" && e.path.endsWith("/jobs"))).toHaveLength(50);
      expect(
        since.filter((e) => e.method === "GET" && /\/configmaps\/aicr-agent-snapshot-/.test(e.path)),
      ).toHaveLength(48);
      const watches = watchesSince(from);
      expect(new Set(watches.map((w) => w.path.split("/").at(-1)))).toEqual(new Set(["pods", "jobs"]));
      expect(watches.length).toBeLessThanOrEqual(4);
      await untilNoRunObjects(cluster, ns);
    },
    TEST_MS,
  );

  test(
    "--sample 3 on stdout: one multi-document YAML in node order, exit 0",
    async () => {
      const ns = await freshNamespace(cluster, "fleet");
      const r = await fleetRun(ns, ["--sample", "3"]);
      expect(r.code).toBe(0);
      const docs = r.stdout.split(/^---\n/m).filter(Boolean);
      expect(docs).toHaveLength(3);
      expect(docs.map((d) => d.match(/source-node: (\S+)/)?.[1])).toEqual(["gpu-00", "gpu-16", "gpu-33"]);
      await untilNoRunObjects(cluster, ns);
    },
    TEST_MS,
  );

  test(
    "bad input is refused before any request (exit 2)",
    async () => {
      const cases = [
        ["--all-nodes", "-o", "cm://default/x"],
        ["--all-nodes", "--parallelism", "0"],
        ["--all-nodes", "-t", "table"],
        ["--sample", "3"],
        ["--all-nodes", "-o", "not-a-dir.yaml"],
      ];
      for (const args of cases) {
        const from = lastSeq(cluster);
        const r = await runSnapshot(kubeconfig, ["-n", "default", ...args]);
        expect({ args, code: r.code }).toEqual({ args, code: 2 });
        expect(cluster.log.entries.filter((e) => e.seq > from)).toHaveLength(0);
      }
      const cm = await runSnapshot(kubeconfig, ["-n", "default", "--all-nodes", "-o", "cm://default/x"]);
      expect(cm.stderr).toContain("-o <dir>/");
    },
    TEST_MS,
  );

  test(
    "--max-nodes below the set: refused with the count, nothing written",
    async () => {
      const ns = await freshNamespace(cluster, "fleet");
      const from = lastSeq(cluster);
      const r = await fleetRun(ns, ["--max-nodes", "10"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("50 nodes");
      expect(writes(cluster, from)).toHaveLength(0);
    },
    TEST_MS,
  );

  test(
    "a --run-id whose anchor still stands: CONFLICT (exit 2) from the gate, nothing written",
    async () => {
      const ns = await freshNamespace(cluster, "fleet");
      const runId = "20261202-010000-00000000000000aa";
      await cluster.store.create(resource("clusterroles"), {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: `aicr-node-reader-${runId}` },
        rules: [],
      });
      const from = lastSeq(cluster);
      const r = await fleetRun(ns, ["--run-id", runId]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`[CONFLICT] run ID ${runId} is already in use`);
      expect(writes(cluster, from)).toHaveLength(0);
    },
    TEST_MS,
  );

  test(
    "no matching node: NOT_FOUND (exit 3)",
    async () => {
      const ns = await freshNamespace(cluster, "fleet");
      const r = await fleetRun(ns, ["--node-selector", "pool=none"]);
      expect(r.code).toBe(3);
    },
    TEST_MS,
  );
});

/**
 * The same run on the real control plane (the truth for scheduling, affinity and the garbage
 * collector): three GPU nodes whose agents run the real binary, one cordoned, one whose agent fails.
 */
describe.skipIf(!BACKENDS.includes("real"))("[real] aicr snapshot --all-nodes (4 GPU nodes)", () => {
  const nodes = ["gpu-a", "gpu-b", "gpu-c", "gpu-d"];
  let real: Cluster;
  beforeAll(async () => {
    await ensureBuilt();
    real = await startTestCluster("real", {
      nodes: nodes.map((n) => node(n, { gpus: 8 })),
      runtime: (api) => {
        const agent = processRuntime({
          images: { [AGENT_IMAGE]: AICR },
          kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
          baseEnv: { PATH: `${H100_BIN}:${process.env.PATH}`, AICR_HOST_ROOT: H100_ROOT, NO_COLOR: "1" },
        });
        return {
          run: (ctx: RunContext) =>
            (ctx.pod.spec as { nodeName?: string }).nodeName === "gpu-c"
              ? Promise.resolve({ exitCode: 1, message: "collector GPU failed: nvidia-smi not found" })
              : agent.run(ctx),
          close: () => agent.close?.() ?? Promise.resolve(),
        };
      },
    });
    // Cordoned once Ready (the testbed waits for untainted nodes; cordoning adds the unschedulable taint).
    await real.store.mutate(resource("nodes"), undefined, "gpu-d", (n) => ({
      ...n,
      spec: { ...n.spec, unschedulable: true },
    }));
  }, SETUP_MS);
  afterAll(() => real?.stop());

  test(
    "two nodes written; fleet.json names the failing agent and the cordoned node; exit 8; nothing left",
    async () => {
      const ns = await freshNamespace(real, "fleet");
      const out = join(await mkdtemp(join(tmpdir(), "aicr-fleet-real-")), "out/");
      const r = await runSnapshot(real.kubeconfigFor("admin"), [
        "-n",
        ns,
        "--all-nodes",
        "--image",
        AGENT_IMAGE,
        "--toleration",
        "nvidia.com/gpu:NoSchedule",
        "--timeout",
        "40s",
        "-o",
        out,
      ]);
      expect(r.code, r.stderr).toBe(8);
      expect(r.stderr).toContain("2 of 4 nodes failed");
      const files = (await readdir(out)).sort();
      expect(files).toEqual(["fleet.json", "gpu-a.yaml", "gpu-b.yaml"]);
      const report = JSON.parse(await readFile(join(out, "fleet.json"), "utf8"));
      const failed = Object.fromEntries(
        report.results
          .filter((x: { status: string }) => x.status === "failed")
          .map((x: { node: string; error: { message: string } }) => [x.node, x.error.message]),
      );
      expect(Object.keys(failed).sort()).toEqual(["gpu-c", "gpu-d"]);
      expect(failed["gpu-c"]).toContain("nvidia-smi not found");
      expect(failed["gpu-d"]).toMatch(/unschedulable|untolerated/);
      await untilNoRunObjects(real, ns);
      // Two nodes set up alike: their snapshots differ only in node-specific readings, so no drift.
      const drift = await aicr(["diff", "--fleet", out, "--fail-on-drift"]);
      expect(drift.code, drift.stdout + drift.stderr).toBe(0);
      expect(drift.stdout).toContain("no drift");
    },
    TEST_MS,
  );
});

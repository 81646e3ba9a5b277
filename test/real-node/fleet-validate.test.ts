/**
 * The real node among process-kubelet nodes: `aicr snapshot --all-nodes` over all three GPU nodes
 * (the process kubelet maps the real node's image reference to dist/aicr over the H100 fixture host),
 * and `aicr validate` capturing live on the real node, whose check-nvidia-smi pod holds one of the
 * device plugin's nvidia.com/gpu and runs the nvidia-smi stand-in the node's runtime injects. Real
 * backend only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSnapshot, type Snapshot } from "../../src/snapshot/schema.ts";
import { processRuntime } from "../cluster/controllers/process-runtime.ts";
import { node } from "../cluster/nodes.ts";
import { BACKENDS, type TestCluster } from "../cluster/testbed.ts";
import { KUBERNETES_VERSION } from "../control-plane/build.ts";
import { AICR, aicr, baseEnv } from "../e2e/_aicr.ts";
import {
  freshNamespace,
  H100_BIN,
  H100_ROOT,
  runSnapshot,
  untilNoRunObjects,
  untilNoRunPods,
} from "../snapshot/_harness.ts";
import { until } from "../support/until.ts";
import { createdObjects, ctrf, runId, untilRunGone } from "../validate/_harness.ts";
import { NODE, type RealNodeCluster, SETUP_MS, startRealNodeCluster, tasks } from "./_support.ts";

const TEST_MS = 240_000;
const PROCESS_NODES = ["gpu-node-1", "gpu-node-2"];

const reading = (doc: Snapshot, type: string, subtype: string) =>
  doc.measurements.find((m) => m.type === type)?.subtypes.find((s) => s.subtype === subtype)?.data;

describe.skipIf(!BACKENDS.includes("real"))("[real] the real node among process-kubelet nodes", () => {
  let env: RealNodeCluster;
  let cluster: TestCluster;
  let admin: string;

  beforeAll(async () => {
    let started: TestCluster | undefined;
    env = await startRealNodeCluster({
      nodes: [...PROCESS_NODES.map((n) => node(n, { gpus: 8 })), node("cpu-node-1")],
      runtime: (api) =>
        processRuntime({
          // The same reference the real node pulls from its registry: dist/aicr on the process nodes.
          images: (image) => (image === started?.realNode?.images.aicr ? AICR : undefined),
          kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
          baseEnv: { PATH: `${H100_BIN}:${process.env.PATH}`, AICR_HOST_ROOT: H100_ROOT, NO_COLOR: "1" },
        }),
    });
    cluster = env.cluster;
    started = cluster;
    admin = env.admin;
  }, SETUP_MS);

  afterAll(async () => {
    await env?.stop();
  }, SETUP_MS);

  const image = () => cluster.realNode!.images.aicr!;
  // Every sandbox and container of the run stopped (no task left); their records are collected by the
  // kubelet's once-a-minute garbage collection (proved once, in snapshot.test.ts).
  const nothingOnTheRealNode = () =>
    until(() => tasks(cluster), "no sandbox or container running on the real node", {
      accept: (live) => live.length === 0,
      ms: 60_000,
      everyMs: 250,
    });

  test(
    "aicr snapshot --all-nodes: every GPU node's snapshot, the real node's with SystemD from its real systemd; nothing left",
    async () => {
      const ns = await freshNamespace(cluster, "fleet");
      const out = mkdtempSync(join(tmpdir(), "aicr-real-fleet-"));
      try {
        const r = await runSnapshot(admin, ["-n", ns, "--all-nodes", "--image", image(), "-o", `${out}/`]);
        expect(r.code, r.stderr).toBe(0);
        const files = readdirSync(out).sort();
        expect(files).toEqual(["fleet.json", ...[...PROCESS_NODES, NODE].sort().map((n) => `${n}.yaml`)]);
        const report = JSON.parse(readFileSync(join(out, "fleet.json"), "utf8"));
        expect(report).toMatchObject({ kind: "FleetSnapshot", nodes: 3, ok: 3, failed: 0 });
        const docs = Object.fromEntries(
          [...PROCESS_NODES, NODE].map((n) => [
            n,
            parseSnapshot(readFileSync(join(out, `${n}.yaml`), "utf8"), `${n}.yaml`),
          ]),
        );
        for (const [n, doc] of Object.entries(docs)) {
          expect(doc.metadata["source-node"]).toBe(n);
          expect(reading(doc, "K8s", "node")?.["source-node"]).toBe(n);
        }
        // The real node's: its kubelet and containerd, its device plugin's GPUs, its real systemd.
        const real = docs[NODE]!;
        expect(reading(real, "K8s", "node")).toMatchObject({
          "container-runtime-name": "containerd",
          "kubelet-version": KUBERNETES_VERSION,
        });
        expect(reading(real, "GPU", "smi")).toMatchObject({ "gpu-count": 8, driver: "570.124.06" });
        expect(reading(real, "SystemD", "containerd.service")).toMatchObject({
          ActiveState: "active",
          SubState: "running",
        });
        expect(reading(real, "SystemD", "docker.service")).toMatchObject({ ActiveState: "failed" });
        // The process nodes' agents ran dist/aicr over the fixture host.
        for (const n of PROCESS_NODES)
          expect(reading(docs[n]!, "K8s", "node")?.["container-runtime-name"]).not.toBe("containerd");
        // Each agent wrote its result as its run's ServiceAccount, through the fault proxy.
        const agentWrites = cluster.log.entries.filter(
          (e) =>
            e.method === "PATCH" &&
            e.path.startsWith(`/api/v1/namespaces/${ns}/configmaps/aicr-agent-snapshot-`) &&
            e.user.startsWith(`system:serviceaccount:${ns}:`),
        );
        expect(new Set(agentWrites.map((e) => e.path)).size).toBe(3);

        await untilNoRunObjects(cluster, ns);
        await untilNoRunPods(cluster, ns);
        await nothingOnTheRealNode();
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    },
    TEST_MS,
  );

  test(
    "aicr validate capturing live on the real node: check-nvidia-smi holds one device-plugin GPU, runs the stand-in and passes with 8; nothing left",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "aicr-real-validate-"));
      const recipe = join(dir, "recipe.yaml");
      writeFileSync(
        recipe,
        "kind: RecipeMetadata\nspec:\n  validation:\n    deployment:\n      checks: [check-nvidia-smi]\n",
      );
      const id = runId("r");
      const ns = "aicr-validation";
      try {
        const r = await aicr(
          [
            "validate",
            "-r",
            recipe,
            "--run-id",
            id,
            "--node-selector",
            `kubernetes.io/hostname=${NODE}`,
            "--image",
            image(),
            "-t",
            "json",
            "-k",
            admin,
            "-n",
            ns,
          ],
          { env: baseEnv() },
        );
        expect(r.code, r.stderr).toBe(0);
        const t = ctrf(r).tests.find((x) => x.name === "check-nvidia-smi");
        expect([t?.status, t?.message]).toEqual([
          "passed",
          "1 GPU node(s): nvidia-smi reports each node's nvidia.com/gpu capacity",
        ]);
        expect(t?.stdout).toContain(
          `[${NODE}] passed: node ${NODE}: nvidia-smi reports 8 GPU(s), matching capacity nvidia.com/gpu=8, allocatable 8`,
        );
        // The live capture ran on the real node (no -s).
        expect(r.stderr).toContain(`running on ${NODE}`);
        // The check's one Job, holding one nvidia.com/gpu, bound to the real node by the selector.
        const jobs = createdObjects(cluster).filter(
          (o) => o.kind === "Job" && o.labels["aicr.run/run-id"] === id,
        );
        expect(jobs.map((j) => j.name)).toContain(`aicr-check-nvidia-smi-0-${id}`);
        const post = cluster.log.entries.find(
          (e) =>
            e.method === "POST" &&
            e.path === `/apis/batch/v1/namespaces/${ns}/jobs` &&
            (e.body as { metadata?: { name?: string } }).metadata?.name === `aicr-check-nvidia-smi-0-${id}`,
        );
        const podSpec = (
          post?.body as
            | {
                spec: {
                  template: {
                    spec: {
                      nodeSelector?: Record<string, string>;
                      nodeName?: string;
                      containers: { resources?: { limits?: Record<string, string> } }[];
                    };
                  };
                };
              }
            | undefined
        )?.spec.template.spec;
        expect(podSpec?.containers[0]?.resources?.limits?.["nvidia.com/gpu"]).toBe("1");
        await untilRunGone(cluster, ns, id);
        await nothingOnTheRealNode();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    TEST_MS,
  );
});

/**
 * check-nvidia-smi on both backends: one pod per GPU node holding one nvidia.com/gpu runs the test
 * kubelets' fake nvidia-smi (8 H100s); the count must equal the node's nvidia.com/gpu capacity.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { node } from "../cluster/nodes.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import {
  createdObjects,
  ctrf,
  LONG,
  NS,
  runId,
  SNAPSHOT,
  untilRunGone,
  validate,
  validationCluster,
} from "./_harness.ts";

/** gpu-node-1 has the 8 GPUs nvidia-smi reports; gpu-node-2's capacity says 4. */
const nodes = () =>
  [
    node("gpu-node-1", { gpus: 8, labels: { pool: "a" } }),
    node("gpu-node-2", { gpus: 4, labels: { pool: "b" } }),
    node("cpu-node-1"),
  ].map((object) => ({ resource: "nodes", object }));

function withRecipe<T>(run: (recipe: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "aicr-nvsmi-"));
  const recipe = join(dir, "r.yaml");
  writeFileSync(
    recipe,
    "kind: RecipeMetadata\nspec:\n  validation:\n    deployment:\n      checks: [check-nvidia-smi]\n",
  );
  return run(recipe).finally(() => rmSync(dir, { recursive: true, force: true }));
}

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, {
      hookMs: LONG,
      start: (b) => validationCluster(b, { nodes: nodes(), operator: false }),
    });

    test(
      "passes on a GPU node whose capacity matches nvidia-smi: one Job bound to it, holding one GPU",
      async () => {
        const id = runId("n");
        const r = await withRecipe((recipe) =>
          validate(cluster(), ["-r", recipe, "-s", SNAPSHOT, "--run-id", id, "--node-selector", "pool=a"]),
        );
        expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" });
        const t = ctrf(r).tests.find((x) => x.name === "check-nvidia-smi");
        expect([t?.status, t?.message]).toEqual([
          "passed",
          "1 GPU node(s): nvidia-smi reports each node's nvidia.com/gpu capacity",
        ]);
        expect(t?.stdout).toContain(
          "[gpu-node-1] passed: node gpu-node-1: nvidia-smi reports 8 GPU(s), matching capacity nvidia.com/gpu=8, allocatable 8",
        );
        const jobs = createdObjects(cluster()).filter(
          (o) => o.kind === "Job" && o.labels["aicr.run/run-id"] === id,
        );
        expect(jobs.map((j) => j.name)).toEqual([`aicr-check-nvidia-smi-0-${id}`]);
        await untilRunGone(cluster(), NS, id);
      },
      LONG,
    );

    test(
      "fails naming the node and both counts when nvidia-smi and the node's capacity differ",
      async () => {
        const id = runId("m");
        const r = await withRecipe((recipe) =>
          validate(cluster(), ["-r", recipe, "-s", SNAPSHOT, "--run-id", id]),
        );
        expect(r.code).toBe(8);
        const t = ctrf(r).tests.find((x) => x.name === "check-nvidia-smi");
        expect([t?.status, t?.message]).toEqual([
          "failed",
          "node gpu-node-2: nvidia-smi reports 8 GPU(s), but the node's capacity nvidia.com/gpu=4, allocatable 4",
        ]);
        expect(r.stderr).toContain("gpu-node-2");
        const jobs = createdObjects(cluster()).filter(
          (o) => o.kind === "Job" && o.labels["aicr.run/run-id"] === id,
        );
        expect(jobs.map((j) => j.name).sort()).toEqual([
          `aicr-check-nvidia-smi-0-${id}`,
          `aicr-check-nvidia-smi-1-${id}`,
        ]);
        await untilRunGone(cluster(), NS, id);
      },
      LONG,
    );
  });

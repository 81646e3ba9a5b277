/**
 * nccl-all-reduce-bw against the real control plane: two 8-GPU EKS nodes (p5.48xlarge, 32 EFA
 * adapters each) and a CPU node, Kubeflow Trainer's stand-in (test/cluster/standins/trainer.ts: its
 * CRDs and a controller creating the launcher and worker pods), whose processes the kubelet runs
 * through the nccl-tests stand-in executable. The check runs in process (checkContext), as in its pod.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { KubeClient } from "../../../src/kube/client.ts";
import type { Verdict } from "../../../src/validate/checks/context.ts";
import { run } from "../../../src/validate/checks/nccl-all-reduce-bw.ts";
import type { Recipe } from "../../../src/validate/recipe.ts";
import type { LoggedRequest } from "../../cluster/request-log.ts";
import {
  installTrainer,
  NCCL_TEST_IMAGE,
  type NcclTestsBinary,
  ncclClusterNodes,
  ncclRuntime,
  ncclTestsBinary,
  TRAINER_API,
  type TrainerStandIn,
} from "../../cluster/standins/trainer.ts";
import { startTestCluster } from "../../cluster/testbed.ts";
import { useCluster } from "../../support/cluster.ts";
import { until } from "../../support/until.ts";
import { checkContext, type TestCheckContext } from "./_context.ts";
import { runAsIdentity } from "./_run-check.ts";

const CHECK = "nccl-all-reduce-bw";
const TEST_MS = 120_000;

function recipe(
  constraint = ">= 300",
  criteria: unknown = { service: "eks", accelerator: "h100", intent: "training" },
): Recipe {
  return {
    kind: "RecipeMetadata",
    spec: {
      constraints: [],
      criteria,
      validation: { performance: { checks: [CHECK], constraints: [{ name: CHECK, value: constraint }] } },
    },
  } as Recipe;
}

/** What is left in the check's namespace: its TrainJobs, TrainingRuntimes and pods. */
async function leftovers(client: KubeClient, namespace: string): Promise<string[]> {
  const names = async (apiVersion: string, kind: string) =>
    (
      await client
        .list<{ metadata?: { name?: string } }>(apiVersion, kind, { namespace })
        .catch(() => ({ items: [] }))
    ).items.map((o) => `${kind}/${o.metadata?.name}`);
  return [
    ...(await names(TRAINER_API, "TrainJob")),
    ...(await names(TRAINER_API, "TrainingRuntime")),
    ...(await names("v1", "Pod")),
  ];
}

/** Nothing the check created (nor the pods Trainer made for it) remains; then the run's namespace goes. */
async function assertCleanedUp(ctx: TestCheckContext): Promise<void> {
  let left: string[] = [];
  await until(
    async () => {
      left = await leftovers(ctx.client, ctx.testNamespace);
      return left.length === 0;
    },
    () => `nothing left in ${ctx.testNamespace}; left: ${left.join(", ")}`,
    { ms: 60_000, everyMs: 200 },
  );
  await ctx.client.delete({ apiVersion: "v1", kind: "Namespace", name: ctx.testNamespace }).catch(() => {});
}

interface Outcome {
  v: Verdict;
  /** The context, its client the admin's again (for the cleanup checks). */
  ctx: TestCheckContext;
  /** The identity's writes (method and path) and its refused requests. */
  writes: string[];
  refused: LoggedRequest[];
}

/**
 * One run of the check as its pod runs it: its namespace made as the run makes it, and its own
 * identity holding exactly the catalog's rules (a 403 would be a rule the catalog lacks).
 */
async function check(o: { recipe?: Recipe; ncclImage?: string; waitScale?: number } = {}): Promise<Outcome> {
  const r = o.recipe ?? recipe();
  const ctx = await checkContext(cluster(), CHECK, {
    recipe: r,
    ...(o.ncclImage ? { ncclImage: o.ncclImage } : {}),
    ...(o.waitScale ? { waitScale: o.waitScale } : {}),
  });
  const { verdict: v, writes, refused } = await runAsIdentity(cluster(), CHECK, ctx, run);
  return { v, ctx, writes: writes.map((e) => `${e.method} ${e.path}`), refused };
}

/** The writes of a run that started the test: the runtime and the TrainJob created, then deleted. */
const trainerWrites = (ctx: TestCheckContext): string[] => {
  const base = `/apis/${TRAINER_API}/namespaces/${ctx.testNamespace}`;
  const runtime = ctx.name("nccl-all-reduce-runtime");
  const job = ctx.name("nccl-allreduce-tj");
  return [
    `POST ${base}/trainingruntimes`,
    `POST ${base}/trainjobs`,
    `DELETE ${base}/trainjobs/${job}`,
    `DELETE ${base}/trainingruntimes/${runtime}`,
  ];
};

let bin: NcclTestsBinary;
const cluster = useCluster("real", {
  start: () => {
    bin = ncclTestsBinary();
    return startTestCluster("real", {
      nodes: ncclClusterNodes({ efa: 32 }),
      runtime: () => ncclRuntime(bin),
    });
  },
});
afterAll(() => bin?.remove());

describe("nccl-all-reduce-bw [real], as its catalog identity", () => {
  test(
    "SKIP without Kubeflow Trainer: the CRDs named, the remedy to install it; nothing written",
    async () => {
      const { v, ctx, writes, refused } = await check({ ncclImage: NCCL_TEST_IMAGE });
      expect(v.status).toBe("skipped");
      expect(v.message).toBe(
        "skipped: Kubeflow Trainer is not installed (no CRD trainjobs.trainer.kubeflow.org, trainingruntimes.trainer.kubeflow.org)",
      );
      expect(v.details.join("\n")).toContain("install Kubeflow Trainer v2 yourself (aicr never installs it)");
      expect(ctx.blocks).toEqual([]);
      expect([writes, refused]).toEqual([[], []]);
      await assertCleanedUp(ctx);
    },
    TEST_MS,
  );

  describe("with Trainer", () => {
    let trainer: TrainerStandIn;
    beforeAll(async () => {
      trainer = await installTrainer(cluster());
    }, TEST_MS);
    afterAll(() => trainer?.stop(), TEST_MS);

    test(
      "SKIP without --nccl-image, naming the EKS image the original used",
      async () => {
        const { v, ctx, writes, refused } = await check();
        expect(v.status).toBe("skipped");
        expect(v.message).toBe("skipped: no NCCL test image was given (--nccl-image)");
        expect(v.details.join("\n")).toContain("public.ecr.aws/hpc-cloud/nccl-tests:");
        expect([writes, refused]).toEqual([[], []]);
        await assertCleanedUp(ctx);
      },
      TEST_MS,
    );

    test(
      "PASS: 350 GB/s against >= 300; the evidence lines; only its two objects written; nothing left",
      async () => {
        bin.set({ busBw: 350 });
        const { v, ctx, writes, refused } = await check({ ncclImage: NCCL_TEST_IMAGE });
        expect(v.message).toBe(
          'NCCL all-reduce bus bandwidth 350.00 GB/s meets the constraint ">= 300" (at least 270.00 GB/s with the 10% tolerance)',
        );
        expect(v.status).toBe("passed");
        expect(v.details[0]).toBe(
          "2 worker(s) × 8 GPU(s) = 16 ranks; EKS: workers on instance type p5.48xlarge, 32 EFA adapter(s) each",
        );
        expect(ctx.blocks).toEqual([
          {
            label: "NCCL All Reduce Bandwidth",
            data: "NCCL All Reduce bandwidth: 350.00 GB/s\nConstraint: >= 300 → true",
            equivalent: undefined,
          },
        ]);
        expect(trainer.handled).toContain(`${ctx.testNamespace}/${ctx.name("nccl-allreduce-tj")}`);
        expect(trainer.errors).toEqual([]);
        expect(refused).toEqual([]);
        expect(writes).toEqual(trainerWrites(ctx));
        await assertCleanedUp(ctx);
      },
      TEST_MS,
    );

    test(
      "FAIL: 200 GB/s is below 90% of 300; the message gives the value and the constraint",
      async () => {
        bin.set({ busBw: 200 });
        const { v, ctx, writes, refused } = await check({ ncclImage: NCCL_TEST_IMAGE });
        expect(v.status).toBe("failed");
        expect(v.message).toBe(
          'NCCL all-reduce bus bandwidth 200.00 GB/s is below the constraint ">= 300" (at least 270.00 GB/s with the 10% tolerance)',
        );
        expect(ctx.blocks.map((b) => b.data)).toEqual([
          "NCCL All Reduce bandwidth: 200.00 GB/s\nConstraint: >= 300 → false",
        ]);
        expect([writes, refused]).toEqual([trainerWrites(ctx), []]);
        await assertCleanedUp(ctx);
      },
      TEST_MS,
    );

    test(
      "FAIL: the launcher fails (mpirun exits 1); its log's tail in the details, no evidence",
      async () => {
        bin.set({ exitCode: 1 });
        const { v, ctx, writes, refused } = await check({ ncclImage: NCCL_TEST_IMAGE });
        expect(v.status).toBe("failed");
        expect(v.message).toMatch(
          /^the NCCL launcher pod nccl-allreduce-tj-\S+-launcher-0-0-\w+ failed: container node exited 1/,
        );
        expect(v.details.join("\n")).toContain("mpirun noticed that process rank 3");
        expect(ctx.blocks).toEqual([]);
        expect([writes, refused]).toEqual([trainerWrites(ctx), []]);
        await assertCleanedUp(ctx);
      },
      TEST_MS,
    );

    test(
      "FAIL: the launcher prints no result row",
      async () => {
        bin.set({ rows: false });
        const { v, ctx, refused } = await check({ ncclImage: NCCL_TEST_IMAGE });
        expect(v.status).toBe("failed");
        expect(v.message).toStartWith("the launcher's output holds no nccl-tests result row");
        expect(refused).toEqual([]);
        await assertCleanedUp(ctx);
      },
      TEST_MS,
    );

    test(
      "FAIL: no launcher appears (Trainer's controller down), after the scaled 5-minute wait",
      async () => {
        trainer.pause();
        try {
          const { v, ctx, writes, refused } = await check({ ncclImage: NCCL_TEST_IMAGE, waitScale: 0.01 });
          expect(v.status).toBe("failed");
          expect(v.message).toMatch(
            /^no launcher pod of the TrainJob nccl-allreduce-tj-\S+ appeared within 3 s/,
          );
          expect([writes, refused]).toEqual([trainerWrites(ctx), []]);
          await assertCleanedUp(ctx);
        } finally {
          trainer.resume();
        }
      },
      TEST_MS,
    );

    test(
      "SKIP with one schedulable GPU node (the other cordoned)",
      async () => {
        const admin = (await checkContext(cluster(), CHECK, { createNamespace: false })).client;
        const cordon = (unschedulable: boolean) =>
          admin.mergePatch(
            { apiVersion: "v1", kind: "Node", name: "gpu-node-2" },
            { spec: { unschedulable } },
          );
        await cordon(true);
        try {
          const { v, ctx, writes, refused } = await check({ ncclImage: NCCL_TEST_IMAGE });
          expect(v.status).toBe("skipped");
          expect(v.message).toBe(
            "skipped: the east-west fabric test needs at least 2 GPU nodes; found 1 (gpu-node-1)",
          );
          expect([writes, refused]).toEqual([[], []]);
          await assertCleanedUp(ctx);
        } finally {
          await cordon(false);
          admin.close();
        }
      },
      TEST_MS,
    );

    test(
      "FAIL on GKE without the GPU NIC networks (networking.gke.io not served)",
      async () => {
        const { v, ctx, writes, refused } = await check({
          recipe: recipe(">= 250", { service: "gke", accelerator: "h100" }),
          ncclImage: NCCL_TEST_IMAGE,
        });
        expect(v.status).toBe("failed");
        expect(v.message).toBe(
          "found 0 GPU NIC network(s) (networking.gke.io/v1 Networks named *gpu-nic*), expected at least 8 for GPUDirect-TCPXO",
        );
        expect([writes, refused]).toEqual([[], []]);
        await assertCleanedUp(ctx);
      },
      TEST_MS,
    );

    test(
      "SKIP on AKS (no template for it)",
      async () => {
        const { v, ctx, writes } = await check({
          recipe: recipe(">= 100", { service: "aks", accelerator: "h100" }),
          ncclImage: NCCL_TEST_IMAGE,
        });
        expect(v.status).toBe("skipped");
        expect(v.message).toContain('no NCCL test template for service "aks" with accelerator "h100"');
        expect(writes).toEqual([]);
        await assertCleanedUp(ctx);
      },
      TEST_MS,
    );
  });
});

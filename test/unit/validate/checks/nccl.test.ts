import { describe, expect, test } from "bun:test";
import type { Json, V1Node } from "../../../../src/kube/types.ts";
import {
  bandwidthVerdict,
  eksShape,
  evidenceLines,
  gkeNetworks,
  logTail,
  nodeGate,
  ORIGINAL_IMAGES,
  parseBusBandwidth,
  parseThreshold,
  prerequisiteGate,
  recipeGate,
  TRAINER_CRDS,
} from "../../../../src/validate/checks/_nccl.ts";
import type { Recipe } from "../../../../src/validate/recipe.ts";

/** A recipe as the reader returns it: criteria and the performance phase's constraints. */
function recipe(o: { criteria?: unknown; constraint?: string | undefined; name?: string }): Recipe {
  return {
    kind: "RecipeMetadata",
    spec: {
      constraints: [],
      ...(o.criteria === undefined ? {} : { criteria: o.criteria }),
      validation: {
        performance: {
          checks: ["nccl-all-reduce-bw"],
          constraints:
            o.constraint === undefined ? [] : [{ name: o.name ?? "nccl-all-reduce-bw", value: o.constraint }],
        },
      },
    },
  } as Recipe;
}

const EKS_H100 = { service: "eks", accelerator: "h100", intent: "training" };

function gpuNode(
  name: string,
  o: { gpus?: string; unschedulable?: boolean; type?: string; efa?: string } = {},
): Json<V1Node> {
  return {
    metadata: { name, labels: o.type ? { "node.kubernetes.io/instance-type": o.type } : {} },
    spec: o.unschedulable ? { unschedulable: true } : {},
    status: {
      allocatable: {
        cpu: "16",
        ...(o.gpus ? { "nvidia.com/gpu": o.gpus } : {}),
        ...(o.efa ? { "vpc.amazonaws.com/efa": o.efa } : {}),
      },
    },
  };
}

const NCCL_TABLE = `# nThread 1 nGpus 1 minBytes 1024 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20
#
# Using devices
#  Rank  0 Group  0 Pid     42 on gpu-node-1 device  0 [0x53] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
        1024           256     float     sum      -1    38.51    0.03    0.05      0    37.96    0.03    0.05      0
     1048576        262144     float     sum      -1    101.2   10.36   19.43      0    99.87   10.50   19.69      0
 17179869184    4294967296     float     sum      -1    66012  260.25  487.97      0    65874  260.80  489.00      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 169.15
#
`;

describe("parseBusBandwidth", () => {
  test("the last data row's out-of-place busbw, not the in-place one nor the average", () => {
    expect(parseBusBandwidth(NCCL_TABLE)).toEqual({ busbw: 487.97, size: 17179869184 });
  });

  test("# lines never match, the average included", () => {
    expect(parseBusBandwidth("# Avg bus bandwidth    : 169.15\n#       size count\n")).toBeUndefined();
  });

  test("a row with a root (broadcast-style) and CRLF line ends", () => {
    const out =
      "       8192          2048     float     none       0    12.50    0.66    1.23      0    12.1    0.68    1.25  0\r\n";
    expect(parseBusBandwidth(out)).toEqual({ busbw: 1.23, size: 8192 });
  });

  test("no data row: undefined (empty output, an error text)", () => {
    expect(parseBusBandwidth("")).toBeUndefined();
    expect(parseBusBandwidth("mpirun: ssh: connect to host x port 22: Connection refused\n")).toBeUndefined();
  });

  test("rows after the table (a second run) make the last one count", () => {
    const two = `${NCCL_TABLE}        2048           512     float     sum      -1    40.00    0.05    0.10      0    40.0    0.05    0.10      0\n`;
    expect(parseBusBandwidth(two)?.busbw).toBe(0.1);
  });
});

describe("parseThreshold", () => {
  test.each([
    [">= 300", 300],
    ["100.5 GB/s", 100.5],
    ["  >=250  ", 250],
    ["!= 7", 7],
    ["300", 300],
    ["<= 1e2 GB/s", 100],
  ])("%p → %p", (value, want) => {
    expect(parseThreshold(value)).toBe(want);
  });

  test.each([["300GB/s"], ["abc"], [""], [">= "], ["Inf"], ["NaN"], ["1,000"]])("%p is refused", (value) => {
    expect(parseThreshold(value)).toBeUndefined();
  });
});

describe("bandwidthVerdict: 90% of the threshold passes", () => {
  test("exactly 0.9 × threshold passes; just below fails", () => {
    expect(bandwidthVerdict(270, ">= 300", 300).passed).toBe(true);
    expect(bandwidthVerdict(269.99, ">= 300", 300).passed).toBe(false);
  });

  test("the failure names the value and the quoted constraint", () => {
    const v = bandwidthVerdict(200, ">= 300", 300);
    expect(v.message).toBe(
      'NCCL all-reduce bus bandwidth 200.00 GB/s is below the constraint ">= 300" (at least 270.00 GB/s with the 10% tolerance)',
    );
  });

  test("the operator is not read: '<= 100' still means at least 90", () => {
    expect(bandwidthVerdict(500, "<= 100", 100).passed).toBe(true);
    expect(bandwidthVerdict(80, "<= 100", 100).passed).toBe(false);
  });

  test("evidence lines", () => {
    expect(evidenceLines(488.371, ">= 100", true)).toBe(
      "NCCL All Reduce bandwidth: 488.37 GB/s\nConstraint: >= 100 → true",
    );
  });
});

describe("the skip and fail order", () => {
  test("1: no constraint → SKIP, before the criteria are looked at", () => {
    for (const r of [undefined, recipe({}), recipe({ constraint: ">= 300", name: "other-check" })]) {
      const g = recipeGate(r);
      expect(g.kind).toBe("skip");
      expect(g.kind !== "go" && g.message).toContain("no nccl-all-reduce-bw constraint");
    }
  });

  test("2: no criteria → SKIP (needs service and accelerator)", () => {
    const g = recipeGate(recipe({ constraint: ">= 300" }));
    expect(g).toMatchObject({ kind: "skip" });
    expect(g.kind !== "go" && g.message).toContain("no criteria");
  });

  test("3: a service/accelerator without a template → SKIP, AKS included", () => {
    for (const criteria of [
      { service: "aks", accelerator: "h100" },
      { service: "eks", accelerator: "gb200" },
      { service: "eks" },
      {},
    ]) {
      const g = recipeGate(recipe({ constraint: ">= 100", criteria }));
      expect(g.kind).toBe("skip");
      expect(g.kind !== "go" && g.message).toContain("no NCCL test template");
    }
  });

  test("4: a threshold that does not parse → FAIL, only once the platform is known", () => {
    expect(
      recipeGate(recipe({ constraint: "300GB/s", criteria: { service: "aks", accelerator: "h100" } })).kind,
    ).toBe("skip");
    const g = recipeGate(recipe({ constraint: "300GB/s", criteria: EKS_H100 }));
    expect(g.kind).toBe("fail");
    expect(g.kind !== "go" && g.message).toContain('"300GB/s" is not a bandwidth');
  });

  test("eks/h100 and gke/h100 go on, criteria read case-insensitively", () => {
    expect(recipeGate(recipe({ constraint: ">= 300", criteria: EKS_H100 }))).toEqual({
      kind: "go",
      platform: "eks",
      constraint: ">= 300",
      threshold: 300,
    });
    expect(
      recipeGate(recipe({ constraint: ">= 250", criteria: { service: "GKE", accelerator: "H100" } })),
    ).toMatchObject({ kind: "go", platform: "gke", threshold: 250 });
  });

  test("5: no schedulable GPU node → FAIL; cordoned and GPU-less nodes do not count", () => {
    const g = nodeGate([
      gpuNode("cpu"),
      gpuNode("gpu-a", { gpus: "8", unschedulable: true }),
      gpuNode("z", { gpus: "0" }),
    ]);
    expect(g.kind).toBe("fail");
    expect(g.kind !== "go" && g.message).toContain(
      "no schedulable node advertises allocatable nvidia.com/gpu",
    );
  });

  test("6: one GPU node → SKIP (needs 2 for the east-west fabric)", () => {
    const g = nodeGate([
      gpuNode("gpu-a", { gpus: "8" }),
      gpuNode("gpu-b", { gpus: "8", unschedulable: true }),
    ]);
    expect(g.kind).toBe("skip");
    expect(g.kind !== "go" && g.message).toContain("at least 2 GPU nodes; found 1 (gpu-a)");
  });

  test("two or more: workers, the first node's GPU count for all, ranks", () => {
    const g = nodeGate([gpuNode("cpu"), gpuNode("gpu-a", { gpus: "8" }), gpuNode("gpu-b", { gpus: "4" })]);
    expect(g).toMatchObject({ kind: "go", workers: 2, gpusPerNode: 8, ranks: 16 });
  });

  test("then the image and Trainer (ours): each named, both together, the original's image as an example", () => {
    const noImage = prerequisiteGate({ platform: "eks", ncclImage: undefined, missingCrds: [] });
    expect(noImage.kind).toBe("skip");
    expect(noImage.kind !== "go" && noImage.message).toBe(
      "skipped: no NCCL test image was given (--nccl-image)",
    );
    expect(noImage.kind !== "go" && noImage.details?.join("\n")).toContain(ORIGINAL_IMAGES.eks);
    const gke = prerequisiteGate({ platform: "gke", ncclImage: undefined, missingCrds: [] });
    expect(gke.kind !== "go" && gke.details?.join("\n")).toContain("nvcr.io/nvidia/pytorch:25.06-py3");

    const noTrainer = prerequisiteGate({
      platform: "eks",
      ncclImage: "x/nccl:1",
      missingCrds: [...TRAINER_CRDS],
    });
    expect(noTrainer.kind !== "go" && noTrainer.message).toBe(
      "skipped: Kubeflow Trainer is not installed (no CRD trainjobs.trainer.kubeflow.org, trainingruntimes.trainer.kubeflow.org)",
    );
    expect(noTrainer.kind !== "go" && noTrainer.details?.join("\n")).toContain(
      "install Kubeflow Trainer v2 yourself",
    );

    const both = prerequisiteGate({
      platform: "eks",
      ncclImage: "",
      missingCrds: ["trainjobs.trainer.kubeflow.org"],
    });
    expect(both.kind !== "go" && both.message).toContain("--nccl-image");
    expect(both.kind !== "go" && both.message).toContain("Kubeflow Trainer is not installed");
    expect(prerequisiteGate({ platform: "eks", ncclImage: "x/nccl:1", missingCrds: [] })).toEqual({
      kind: "go",
      image: "x/nccl:1",
    });
  });
});

describe("platform shapes", () => {
  test("EKS: the first node's instance type and EFA count; other types listed", () => {
    const nodes = [
      gpuNode("a", { gpus: "8", type: "p5.48xlarge", efa: "32" }),
      gpuNode("b", { gpus: "8", type: "p4d.24xlarge" }),
    ];
    expect(eksShape(nodes)).toEqual({
      kind: "go",
      instanceType: "p5.48xlarge",
      efa: 32,
      otherTypes: ["p4d.24xlarge"],
    });
    expect(eksShape([gpuNode("a", { gpus: "8", type: "p5.48xlarge" })])).toMatchObject({
      efa: 0,
      otherTypes: [],
    });
  });

  test("EKS: no instance-type label on the first GPU node → FAIL", () => {
    const g = eksShape([gpuNode("a", { gpus: "8" }), gpuNode("b", { gpus: "8", type: "p5.48xlarge" })]);
    expect(g.kind).toBe("fail");
    expect(g.kind !== "go" && g.message).toContain(
      "GPU node a has no node.kubernetes.io/instance-type label",
    );
  });

  test("GKE: 8 gpu-nic networks sorted; fewer → FAIL", () => {
    const names = ["default", ...Array.from({ length: 8 }, (_, i) => `demo-gpu-nic-${7 - i}`), "gvnic-1"];
    expect(gkeNetworks(names)).toEqual({
      kind: "go",
      networks: Array.from({ length: 8 }, (_, i) => `demo-gpu-nic-${i}`),
    });
    const seven = gkeNetworks(names.filter((n) => n !== "demo-gpu-nic-3"));
    expect(seven.kind).toBe("fail");
    expect(seven.kind !== "go" && seven.message).toContain("found 7 GPU NIC network(s)");
    expect(gkeNetworks([]).kind).toBe("fail");
  });
});

test("logTail keeps the last non-empty lines", () => {
  expect(logTail("a\n\nb\nc\n", 2)).toEqual(["b", "c"]);
});

/**
 * gpu-operator-health and accelerator-metrics against the real control plane, each run as its catalog
 * identity: the GPU Operator stand-in (test/cluster/standins/gpu-operator.ts) — a real Deployment,
 * DaemonSet and ClusterPolicy, and a DCGM exporter served from this process behind
 * gpu-operator/nvidia-dcgm-exporter's EndpointSlice — switched between its healthy and broken variants.
 * Neither check has a skip (the original's never skip).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { run as acceleratorMetrics } from "../../../src/validate/checks/accelerator-metrics.ts";
import { run as gpuOperatorHealth } from "../../../src/validate/checks/gpu-operator-health.ts";
import { standinClusterOptions } from "../../cluster/standins/_cluster.ts";
import {
  DCGM_FAMILIES,
  type GpuOperatorStandin,
  installGpuOperatorStandin,
} from "../../cluster/standins/gpu-operator.ts";
import { CLUSTER_HOOK_MS } from "../../cluster/testbed.ts";
import { useCluster } from "../../support/cluster.ts";
import { expectReadOnly, runCheck } from "./_run-check.ts";

const LONG = 120_000;

describe("[real] gpu-operator-health and accelerator-metrics", () => {
  const cluster = useCluster("real", standinClusterOptions());
  let op: GpuOperatorStandin;
  beforeAll(async () => {
    op = await installGpuOperatorStandin(cluster());
  }, CLUSTER_HOOK_MS);
  afterAll(async () => {
    await op?.stop();
  });

  const health = () => runCheck(cluster(), "gpu-operator-health", gpuOperatorHealth);
  const metrics = () => runCheck(cluster(), "accelerator-metrics", acceleratorMetrics);

  describe("gpu-operator-health", () => {
    test(
      "passes: operator available, ClusterPolicy ready, a DCGM exporter pod ready; reads only, within its rules",
      async () => {
        const r = await health();
        expect(r.verdict.status).toBe("passed");
        expect(r.verdict.details).toEqual([
          "GPU Operator: Deployment gpu-operator/gpu-operator 1 of 1 available",
          "ClusterPolicy cluster-policy: state ready",
          "DaemonSet gpu-operator/nvidia-dcgm-exporter: 2 of 2 pod(s) ready",
        ]);
        expect(r.ctx.blocks).toEqual([]);
        expectReadOnly(r);
      },
      LONG,
    );

    test(
      "fails: ClusterPolicy notReady",
      async () => {
        await op.set({ clusterPolicy: "notReady" });
        try {
          const r = await health();
          expect(r.verdict).toMatchObject({
            status: "failed",
            message: "ClusterPolicy cluster-policy is not ready: state notReady, expected ready",
          });
          expect(r.left).toEqual([]);
        } finally {
          await op.set({ clusterPolicy: "ready" });
        }
      },
      LONG,
    );

    test(
      "fails: the DCGM exporter DaemonSet has no ready pod, and the ClusterPolicy has no state — both reported",
      async () => {
        await op.set({ dcgmExporter: "notReady", clusterPolicy: "noState" });
        try {
          const r = await health();
          expect(r.verdict.status).toBe("failed");
          expect(r.verdict.message).toBe(
            "ClusterPolicy cluster-policy reports no status.state; DaemonSet gpu-operator/nvidia-dcgm-exporter has no ready pod (0 of 2 ready)",
          );
          expect(r.refused).toEqual([]);
        } finally {
          await op.set({ dcgmExporter: "ready", clusterPolicy: "ready" });
        }
      },
      LONG,
    );

    test(
      "fails: no operator Deployment (by label nor by name), and no ClusterPolicy",
      async () => {
        await op.set({ operator: "absent", clusterPolicy: "absent" });
        try {
          const r = await health();
          expect(r.verdict.message).toBe(
            "the GPU Operator is not installed: no Deployment gpu-operator/gpu-operator (none labelled app.kubernetes.io/name=gpu-operator); ClusterPolicy cluster-policy not found",
          );
          expect(r.refused).toEqual([]);
        } finally {
          await op.set({ operator: "available", clusterPolicy: "ready" });
        }
      },
      LONG,
    );

    test(
      "fails: the operator's Deployment has no available replica",
      async () => {
        await op.set({ operator: "unavailable" });
        try {
          const r = await health();
          expect(r.verdict.message).toBe(
            "the GPU Operator Deployment has no available replica (gpu-operator: 0 of 1 available)",
          );
        } finally {
          await op.set({ operator: "available" });
        }
      },
      LONG,
    );
  });

  describe("accelerator-metrics", () => {
    test(
      "passes: the exporter's ready endpoint serves the four families; evidence as the original's",
      async () => {
        const before = op.requests;
        const r = await metrics();
        expect(r.verdict.status).toBe("passed");
        expect(r.verdict.message).toBe(
          `the DCGM exporter at ${op.serverUrl}/metrics serves all 4 required GPU metrics`,
        );
        expect(op.requests - before).toBe(1);
        expect(r.ctx.blocks.map((b) => b.label)).toEqual([
          "DCGM Exporter Metrics (sample)",
          "Required DCGM Metrics",
        ]);
        const sample = r.ctx.blocks[0]!.data.split("\n");
        expect(sample).toHaveLength(9);
        expect(sample[0]).toBe("# HELP DCGM_FI_DEV_GPU_UTIL Stand-in DCGM_FI_DEV_GPU_UTIL.");
        expect(sample[8]).toBe("... [truncated]");
        expect(r.ctx.blocks[1]!.data).toBe(DCGM_FAMILIES.map((f) => `${f}: FOUND`).join("\n"));
        expectReadOnly(r);
      },
      LONG,
    );

    test(
      "fails: one family missing, named",
      async () => {
        await op.set({ metrics: "missingFamily" });
        try {
          const r = await metrics();
          expect(r.verdict).toMatchObject({
            status: "failed",
            message: "the DCGM exporter does not serve required metric(s): DCGM_FI_DEV_POWER_USAGE",
          });
          expect(r.ctx.blocks[1]!.data).toContain("DCGM_FI_DEV_POWER_USAGE: MISSING");
        } finally {
          await op.set({ metrics: "ok" });
        }
      },
      LONG,
    );

    test(
      "fails: the exporter answers 500 (one request, no retry, no evidence)",
      async () => {
        await op.set({ metrics: "error" });
        try {
          const before = op.requests;
          const r = await metrics();
          expect(r.verdict.message).toBe(
            `the DCGM exporter answered GET ${op.serverUrl}/metrics with HTTP 500, expected 200`,
          );
          expect(op.requests - before).toBe(1);
          expect(r.ctx.blocks).toEqual([]);
        } finally {
          await op.set({ metrics: "ok" });
        }
      },
      LONG,
    );

    test(
      "fails: the endpoint is unreachable (nothing listens on its port)",
      async () => {
        await op.set({ metrics: "unreachable" });
        try {
          const r = await metrics();
          expect(r.verdict.status).toBe("failed");
          expect(r.verdict.message).toMatch(
            /^the DCGM exporter did not answer GET http:\/\/[\d.]+:\d+\/metrics: .*(ECONNREFUSED|Unable to connect)/,
          );
        } finally {
          await op.set({ metrics: "ok" });
        }
      },
      LONG,
    );

    test(
      "fails: no ready endpoint, and no Service at all",
      async () => {
        await op.set({ metrics: "notReady" });
        try {
          const r = await metrics();
          expect(r.verdict.message).toBe(
            "Service gpu-operator/nvidia-dcgm-exporter has no ready endpoint: no DCGM exporter pod is ready to serve metrics on port 9400",
          );
          await op.set({ metrics: "absent" });
          const gone = await metrics();
          expect(gone.verdict.message).toBe(
            "Service gpu-operator/nvidia-dcgm-exporter not found: the DCGM exporter is not deployed",
          );
          expect(gone.refused).toEqual([]);
        } finally {
          await op.set({ metrics: "ok" });
        }
      },
      LONG,
    );
  });
});

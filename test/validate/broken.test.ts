/** Failure paths: a broken GPU Operator install, and a validator Job that cannot schedule. */
import { describe, expect, test } from "bun:test";
import { node } from "../cluster/nodes.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import {
  ctrf,
  LONG,
  NS,
  runId,
  SAMPLE_RECIPE,
  SNAPSHOT,
  untilRunGone,
  validate,
  validationCluster,
} from "./_harness.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    describe("a broken GPU Operator install", () => {
      const cluster = useCluster(backend, {
        hookMs: LONG,
        start: (b) => validationCluster(b, { broken: true }),
      });

      test(
        "every built-in check fails with its reason; exit 8; the report is still written; nothing is left",
        async () => {
          const id = runId("d");
          const r = await validate(cluster(), ["-r", SAMPLE_RECIPE, "-s", SNAPSHOT, "--run-id", id]);
          expect(r.code).toBe(8);
          expect(r.stderr).toContain("[INTERNAL] 3 check(s) did not pass");
          const tests = ctrf(r).tests.filter((t) => t.suite[0] === "deployment");
          expect(tests.map((t) => [t.name, t.status, t.message])).toEqual([
            ["operator-health", "failed", "ClusterPolicy not ready: cluster-policy (notReady)"],
            [
              "expected-resources",
              "failed",
              "GPU node(s) advertise no allocatable nvidia.com/gpu: gpu-node-2",
            ],
            [
              "gpu-operator-version",
              "failed",
              "deployed GPU Operator v23.9.0; Deployment.gpu-operator.version expects >= v24.6.0",
            ],
          ]);
          // The validator's output is kept for the report.
          expect(tests[0]?.stdout).toContain("ClusterPolicy cluster-policy: state notReady");
          await untilRunGone(cluster(), NS, id);
        },
        LONG,
      );

      test(
        "--no-fail-on-error reports the failures and exits 0",
        async () => {
          const r = await validate(cluster(), ["-r", SAMPLE_RECIPE, "-s", SNAPSHOT, "--no-fail-on-error"]);
          expect(r.code).toBe(0);
          expect(ctrf(r).summary).toMatchObject({ failed: 3 });
        },
        LONG,
      );
    });

    describe("a GPU node no validator tolerates", () => {
      const tainted = node("gpu-node-1", {
        gpus: 8,
        taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }],
      });
      const cluster = useCluster(backend, {
        hookMs: LONG,
        start: (b) =>
          validationCluster(b, { nodes: [{ resource: "nodes", object: tainted }], operator: false }),
      });

      test(
        "a validator Job that cannot schedule fails fast (reported other, exit 8), long before its timeout",
        async () => {
          const id = runId("e");
          const r = await validate(cluster(), [
            "-r",
            SAMPLE_RECIPE,
            "-s",
            SNAPSHOT,
            "--run-id",
            id,
            "--skip-check",
            "expected-resources",
            "--skip-check",
            "gpu-operator-version",
            "--timeout",
            "10m",
          ]);
          expect(r.code).toBe(8);
          const health = ctrf(r).tests.find((t) => t.name === "operator-health");
          expect(health?.status).toBe("other");
          expect(health?.message).toContain("the check's pod cannot run: no node can run");
          expect(health?.message).toContain("untolerated taint");
          await untilRunGone(cluster(), NS, id);
        },
        LONG,
      );
    });
  });

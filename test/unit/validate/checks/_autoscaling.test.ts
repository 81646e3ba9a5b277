import { describe, expect, test } from "bun:test";
import {
  describeHpa,
  duration,
  hpaWantsMore,
  powerHpa,
  sleepDeployment,
} from "../../../../src/validate/checks/_autoscaling.ts";

const ctx = {
  testNamespace: "aicr-pod-autoscaling-r1",
  labels: { "aicr.run/run-id": "r1" },
  image: "ghcr.io/nvidia/aicr:v1",
  placement: {
    nodeSelector: { pool: "a", "nvidia.com/gpu.present": "true" },
    tolerations: [{ key: "dedicated", operator: "Exists" as const }],
  },
};

describe("the test Deployment", () => {
  test("this project's image running aicr probe sleep, restricted, the run's placement merged under the check's", () => {
    const d = sleepDeployment(ctx, {
      name: "t-r1",
      container: "gpu-workload",
      seconds: 120,
      requests: { "nvidia.com/gpu": "1" },
      limits: { "nvidia.com/gpu": "1" },
      nodeSelector: { pool: "gpu" },
      tolerations: [{ key: "nvidia.com/gpu", operator: "Equal", value: "present", effect: "NoSchedule" }],
    });
    expect(d.metadata).toEqual({
      name: "t-r1",
      namespace: "aicr-pod-autoscaling-r1",
      labels: { "aicr.run/run-id": "r1", app: "t-r1" },
    });
    const spec = d.spec as {
      replicas: number;
      selector: unknown;
      template: { metadata: unknown; spec: Record<string, any> };
    };
    expect(spec.replicas).toBe(1);
    expect(spec.selector).toEqual({ matchLabels: { app: "t-r1" } });
    const pod = spec.template.spec;
    expect(pod.nodeSelector).toEqual({ pool: "gpu", "nvidia.com/gpu.present": "true" });
    expect(pod.tolerations).toEqual([
      { key: "nvidia.com/gpu", operator: "Equal", value: "present", effect: "NoSchedule" },
      { key: "dedicated", operator: "Exists" },
    ]);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.containers[0]).toMatchObject({
      name: "gpu-workload",
      image: "ghcr.io/nvidia/aicr:v1",
      command: ["aicr"],
      args: ["probe", "sleep", "120"],
      resources: { requests: { "nvidia.com/gpu": "1" }, limits: { "nvidia.com/gpu": "1" } },
    });
    expect(pod.containers[0].securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
    });
  });
});

describe("the HPA", () => {
  test("autoscaling/v2 on the external power metric, target average 10; scale-down at once when asked", () => {
    const h = powerHpa(ctx, { name: "h", deployment: "d", maxReplicas: 3, scaleDownAtOnce: true });
    expect(h.spec).toEqual({
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "d" },
      minReplicas: 1,
      maxReplicas: 3,
      metrics: [
        {
          type: "External",
          external: {
            metric: { name: "dcgm_gpu_power_usage" },
            target: { type: "AverageValue", averageValue: "10" },
          },
        },
      ],
      behavior: { scaleDown: { stabilizationWindowSeconds: 0 } },
    });
    expect(
      powerHpa(ctx, { name: "h", deployment: "d", maxReplicas: 4, scaleDownAtOnce: false }).spec,
    ).not.toHaveProperty("behavior");
  });

  test("wants more: desired above current, or above the Deployment's 1 replica once current caught up", () => {
    expect(hpaWantsMore({ status: { desiredReplicas: 3, currentReplicas: 1 } })).toBe(true);
    expect(hpaWantsMore({ status: { desiredReplicas: 3, currentReplicas: 3 } })).toBe(true);
    expect(hpaWantsMore({ status: { desiredReplicas: 1, currentReplicas: 1 } })).toBe(false);
    expect(hpaWantsMore({ status: {} })).toBe(false);
    expect(hpaWantsMore(undefined)).toBe(false);
  });

  test("described: replicas, the metric's average, the conditions that are not True", () => {
    expect(
      describeHpa({
        status: {
          desiredReplicas: 1,
          currentReplicas: 1,
          currentMetrics: [
            { external: { metric: { name: "dcgm_gpu_power_usage" }, current: { averageValue: "0" } } },
          ],
          conditions: [
            { type: "AbleToScale", status: "True", reason: "ReadyForNewScale" },
            {
              type: "ScalingActive",
              status: "False",
              reason: "FailedGetExternalMetric",
              message: "no metric",
            },
          ],
        },
      }),
    ).toBe(
      "desiredReplicas 1, currentReplicas 1; dcgm_gpu_power_usage average 0; ScalingActive=False (FailedGetExternalMetric: no metric)",
    );
    expect(describeHpa(undefined)).toBe("never read");
  });

  test("durations as an operator reads them", () => {
    expect(duration(180_000)).toBe("3m0s");
    expect(duration(125_000)).toBe("2m5s");
    expect(duration(18_000)).toBe("18s");
    expect(duration(2_450)).toBe("2.5s");
  });
});

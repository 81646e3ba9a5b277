/** The conformance and performance checks' code, by catalog name, each loaded only when its pod runs it. */
import type { CheckRun } from "./context.ts";

type Load = () => Promise<CheckRun>;

export const CHECK_RUNS: Readonly<Record<string, Load>> = {
  "nccl-all-reduce-bw": () => import("./nccl-all-reduce-bw.ts").then((m) => m.run),
  "gpu-operator-health": () => import("./gpu-operator-health.ts").then((m) => m.run),
  "platform-health": () => import("./platform-health.ts").then((m) => m.run),
  "dra-support": () => import("./dra-support.ts").then((m) => m.run),
  "secure-accelerator-access": () => import("./secure-accelerator-access.ts").then((m) => m.run),
  "gang-scheduling": () => import("./gang-scheduling.ts").then((m) => m.run),
  "accelerator-metrics": () => import("./accelerator-metrics.ts").then((m) => m.run),
  "ai-service-metrics": () => import("./ai-service-metrics.ts").then((m) => m.run),
  "inference-gateway": () => import("./inference-gateway.ts").then((m) => m.run),
  "pod-autoscaling": () => import("./pod-autoscaling.ts").then((m) => m.run),
  "cluster-autoscaling": () => import("./cluster-autoscaling.ts").then((m) => m.run),
  "robust-controller": () => import("./robust-controller.ts").then((m) => m.run),
};

/**
 * One real cluster with every stand-in of a GPU cluster's services, for running all sixteen checks
 * through the compiled binary (all-checks.test.ts):
 *
 *   const cluster = useCluster("real", { start: allStandinsCluster });   // GPU nodes only: "absent"
 *   const s = await installAllStandins(cluster());                        // every stand-in healthy
 *   await s.breakAll();                                                   // each broken for its check
 *   await s.retireAddedNodes();                                           // Karpenter's nodes cordoned
 *   await s.stop();                                                       // servers and controllers
 *
 * The nodes: gpu-node-1 and gpu-node-2 (8 GPUs each, EKS instance type p5.48xlarge, 32 EFA adapters,
 * labelled nvidia.com/gpu.present=true) and cpu-node-1. The stand-ins' one process runtime
 * (standins/_cluster.ts): this project's IMAGE runs dist/aicr (the validators' Jobs and every probe pod;
 * nvidia-smi is the H100 fixture's), the NCCL image the stand-in nccl-tests script (trainer.ts), and
 * every other image — the stand-ins' operators, exporters, schedulers, proxies — runs until its pod is
 * deleted, but the DRA driver's (draOperandRuntime); an unpullable image never starts; the GPU-leak
 * switch (gpu-access.ts) sits in front of all of it.
 *
 * What each check's stand-in is, healthy and broken (breakAll):
 *
 *   gpu-operator-health        GPU Operator stand-in             ClusterPolicy state notReady
 *   accelerator-metrics        its DCGM exporter /metrics         DCGM_FI_DEV_POWER_USAGE missing
 *   platform-health            the recipe's expectedResources     Deployment cert-manager/cert-manager gone
 *   dra-support                DRA driver stand-in (dra.ts)       its controller scaled to zero
 *   secure-accelerator-access  the process kubelet's devices      GPUs leak into claim-less containers
 *   gang-scheduling            KAI scheduler stand-in             binds one gang member only
 *   ai-service-metrics         Prometheus stand-in                answers HTTP 500
 *   inference-gateway          kgateway stand-in                  Gateway not Programmed
 *   pod-autoscaling            prometheus-adapter's metrics APIs  custom GPU metrics without values
 *   cluster-autoscaling        Karpenter stand-in                 adds no node
 *   robust-controller          Dynamo operator + webhook          the webhook allows the invalid resource
 *   nccl-all-reduce-bw         Trainer stand-in + nccl-tests      bus bandwidth 200 GB/s (< 0.9 × 300)
 */
import { join } from "node:path";
import { installDraDriver, scaleDraControllerToZero } from "../../cluster/dra.ts";
import { resource } from "../../cluster/resources.ts";
import { standinClusterOptions } from "../../cluster/standins/_cluster.ts";
import { adminClient } from "../../cluster/standins/_host.ts";
import { standinDeployment } from "../../cluster/standins/_standin-api.ts";
import {
  installKarpenter,
  type KarpenterStandin,
  NODEPOOL_LABEL,
} from "../../cluster/standins/autoscaler.ts";
import { installKgatewayStandin, type KgatewayStandin } from "../../cluster/standins/gateway.ts";
import type { GpuLeak } from "../../cluster/standins/gpu-access.ts";
import { type GpuOperatorStandin, installGpuOperatorStandin } from "../../cluster/standins/gpu-operator.ts";
import { installKaiScheduler, type KaiStandin } from "../../cluster/standins/kai.ts";
import {
  type MetricsApiStandin,
  type PrometheusStandin,
  startMetricsApi,
  startPrometheus,
} from "../../cluster/standins/metrics.ts";
import { installOperator, type OperatorStandin } from "../../cluster/standins/operators.ts";
import {
  installTrainer,
  NCCL_TEST_IMAGE,
  type NcclTestsBinary,
  ncclClusterNodes,
  ncclTestsBinary,
  type TrainerStandIn,
} from "../../cluster/standins/trainer.ts";
import { startTestCluster, type TestCluster } from "../../cluster/testbed.ts";
import { AICR, ensureBuilt, ROOT } from "../../e2e/_aicr.ts";
import { until, untilStore } from "../../support/until.ts";
import { IMAGE } from "../_harness.ts";

/** The GPU pool the Karpenter stand-in grows: room for several scale-ups (8 GPUs a node). */
export const GPU_POOL = "gpu-pool";

export interface AllStandinsCluster extends TestCluster {
  /** The nccl-tests stand-in the NCCL image runs: `bin.set({ busBw })` sets the next launcher's result. */
  bin: NcclTestsBinary;
  /** While enabled, every claim-less container gets the node's GPU device nodes. */
  leak: GpuLeak;
}

/** The cluster with GPU nodes only (nothing installed: every stand-in absent). */
export async function allStandinsCluster(): Promise<AllStandinsCluster> {
  await ensureBuilt();
  const bin = ncclTestsBinary();
  const leak: GpuLeak = { enabled: false };
  try {
    const cluster = await startTestCluster(
      "real",
      standinClusterOptions({
        nodes: ncclClusterNodes({ efa: 32 }),
        images: { [IMAGE]: AICR, [NCCL_TEST_IMAGE]: bin.path },
        // check-nvidia-smi's pods find the H100 fixture's nvidia-smi (8 GPUs).
        binDir: join(ROOT, "test/fixtures/bin/h100"),
        leak,
      }),
    );
    const stop = cluster.stop;
    return Object.assign(cluster, {
      bin,
      leak,
      stop: async () => {
        await stop();
        bin.remove();
      },
    });
  } catch (e) {
    bin.remove();
    throw e;
  }
}

/** A component only platform-health looks at (the recipe's cert-manager): one Deployment. */
export const CERT_MANAGER = { namespace: "cert-manager", name: "cert-manager" } as const;

export interface AllStandins {
  gpuOperator: GpuOperatorStandin;
  kai: KaiStandin;
  gateway: KgatewayStandin;
  prometheus: PrometheusStandin;
  metricsApi: MetricsApiStandin;
  trainer: TrainerStandIn;
  karpenter: KarpenterStandin;
  dynamo: OperatorStandin;
  /** Every stand-in switched to the variant its check is meant to catch (the table above), settled. */
  breakAll(): Promise<void>;
  /**
   * Cordons the Nodes Karpenter has added (and waits until the scheduler's view has them so): the next
   * cluster-autoscaling run needs a new node again, and nccl-all-reduce-bw counts only gpu-node-1/2.
   */
  retireAddedNodes(): Promise<void>;
  stop(): Promise<void>;
}

/** Every stand-in, healthy. The DRA driver first (KAI allocates from its slices), the rest beside it. */
export async function installAllStandins(cluster: AllStandinsCluster): Promise<AllStandins> {
  const started: { stop(): Promise<void> }[] = [];
  const keep = <T extends { stop(): Promise<void> }>(s: T): T => {
    started.push(s);
    return s;
  };
  const stopAll = async () => {
    await Promise.allSettled(started.reverse().map((s) => s.stop()));
  };
  try {
    const [kai, gpuOperator, gateway, prometheus, metricsApi, trainer, karpenter, dynamo] = await Promise.all(
      [
        installDraDriver(cluster).then(() => installKaiScheduler(cluster).then(keep)),
        installGpuOperatorStandin(cluster).then(keep),
        installKgatewayStandin(cluster),
        startPrometheus(cluster).then(keep),
        startMetricsApi(cluster).then(keep),
        installTrainer(cluster).then(keep),
        installKarpenter(cluster, {
          pools: [
            { name: "cpu-pool", gpu: false },
            { name: GPU_POOL, gpuLimit: "64" },
          ],
        }).then(keep),
        installOperator(cluster, { operator: "dynamo" }).then(keep),
        installCertManager(cluster),
      ],
    );
    return {
      gpuOperator,
      kai,
      gateway,
      prometheus,
      metricsApi,
      trainer,
      karpenter,
      dynamo,
      async breakAll() {
        await Promise.all([
          gpuOperator.set({ clusterPolicy: "notReady", metrics: "missingFamily" }),
          gateway.set({ gateway: "notProgrammed" }),
          scaleDraControllerToZero(cluster),
          removeCertManager(cluster),
        ]);
        cluster.leak.enabled = true;
        kai.gang = "onlyOne";
        prometheus.mode = "error";
        metricsApi.custom = "empty";
        karpenter.broken = true;
        dynamo.webhook = "allow";
        cluster.bin.set({ busBw: 200 });
      },
      async retireAddedNodes() {
        const client = adminClient(cluster);
        try {
          for (const name of karpenter.added)
            await client.mergePatch(
              { apiVersion: "v1", kind: "Node", name },
              { spec: { unschedulable: true } },
            );
        } finally {
          client.close();
        }
        await untilStore(
          cluster,
          () =>
            cluster.store
              .list(resource("nodes"), { labelSelector: `${NODEPOOL_LABEL}=${GPU_POOL}` })
              .items.every((n) => n.spec?.unschedulable === true),
          `the ${GPU_POOL} nodes cordoned`,
        );
      },
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

async function installCertManager(cluster: TestCluster): Promise<void> {
  const client = adminClient(cluster);
  try {
    await standinDeployment(client, {
      ...CERT_MANAGER,
      labels: { "app.kubernetes.io/name": "cert-manager" },
      image: "quay.io/jetstack/cert-manager-controller:v1.17.2",
    });
  } finally {
    client.close();
  }
}

async function removeCertManager(cluster: TestCluster): Promise<void> {
  const client = adminClient(cluster);
  const ref = { apiVersion: "apps/v1", kind: "Deployment", ...CERT_MANAGER };
  try {
    await client.delete(ref);
    await until(
      async () =>
        !(await client.get(ref).then(
          () => true,
          () => false,
        )),
      `Deployment ${CERT_MANAGER.namespace}/${CERT_MANAGER.name} gone`,
    );
  } finally {
    client.close();
  }
}

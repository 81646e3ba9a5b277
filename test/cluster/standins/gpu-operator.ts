/**
 * A GPU Operator stand-in for the conformance checks, on the real backend: the operator's Deployment
 * gpu-operator (label app.kubernetes.io/name=gpu-operator), ClusterPolicy cluster-policy with its
 * status.state, the DCGM exporter DaemonSet nvidia-dcgm-exporter (pods the process kubelet runs, so its
 * status is the controller's), and a DCGM exporter HTTP server in this process behind Service
 * gpu-operator/nvidia-dcgm-exporter:9400 — a selectorless Service, an EndpointSlice and a legacy
 * Endpoints object (not mirrored) pointing at this host's address.
 *
 *   const op = await installGpuOperatorStandin(cluster);             // everything healthy
 *   await op.set({ clusterPolicy: "notReady" });                     // a broken variant, settled
 *   await op.set({ metrics: "missingFamily" });
 *   await op.stop();                                                  // the server (objects stay)
 *   const remove = await installDcgmExporter(cluster);               // the exporter DaemonSet alone
 *
 * Start the cluster with standinClusterOptions() (_cluster.ts): its runtime keeps the pods running,
 * and its unpullable image is what a "not ready" variant's pods use.
 */
import { until } from "../../support/until.ts";
import type { TestCluster } from "../testbed.ts";
import { hostAddress } from "./_host.ts";
import {
  apiPath,
  daemonSetObject,
  deploymentObject,
  type StandinApi,
  standinApi,
  UNPULLABLE_IMAGE,
  untilWorkload,
} from "./_standin-api.ts";

export const GPU_OPERATOR_NS = "gpu-operator";
export const DCGM_EXPORTER = "nvidia-dcgm-exporter";
export const DCGM_PORT = 9400;
export const DCGM_FAMILIES = [
  "DCGM_FI_DEV_GPU_UTIL",
  "DCGM_FI_DEV_FB_USED",
  "DCGM_FI_DEV_GPU_TEMP",
  "DCGM_FI_DEV_POWER_USAGE",
] as const;
/** The family the missingFamily variant leaves out. */
export const DROPPED_FAMILY = "DCGM_FI_DEV_POWER_USAGE";

export interface GpuOperatorStandinOptions {
  /** The operator's Deployment: available (default), unavailable (its pod never pulls), absent. */
  operator?: "available" | "unavailable" | "absent";
  /** ClusterPolicy cluster-policy's status.state (default ready); "noState": no status; absent: none. */
  clusterPolicy?: "ready" | "notReady" | "noState" | "absent";
  /** The DCGM exporter DaemonSet: ready (default), notReady (its pod never pulls), absent. */
  dcgmExporter?: "ready" | "notReady" | "absent";
  /**
   * The exporter's /metrics: ok (default; the four families and a few more lines), missingFamily
   * (DCGM_FI_DEV_POWER_USAGE left out), error (HTTP 500), unreachable (the endpoint is a closed port),
   * notReady (the endpoint is not ready), absent (no Service, EndpointSlice or Endpoints).
   */
  metrics?: "ok" | "missingFamily" | "error" | "unreachable" | "notReady" | "absent";
}

export interface GpuOperatorStandin {
  /** Switches the given parts to another variant and resolves once the cluster shows it. */
  set(options: GpuOperatorStandinOptions): Promise<void>;
  /** The exporter's address as its EndpointSlice gives it. */
  readonly serverUrl: string;
  /** GETs the server answered. */
  readonly requests: number;
  stop(): Promise<void>;
}

/** The exporter's answer: Prometheus text, each family with HELP, TYPE and one sample per GPU. */
export function dcgmMetricsText(families: readonly string[] = DCGM_FAMILIES): string {
  const sample = (name: string, gpu: number, v: number) =>
    `${name}{gpu="${gpu}",UUID="GPU-0000000${gpu}",device="nvidia${gpu}",modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-node-1"} ${v}`;
  return `${families
    .flatMap((f, i) => [
      `# HELP ${f} Stand-in ${f}.`,
      `# TYPE ${f} gauge`,
      sample(f, 0, 10 + i),
      sample(f, 1, 20 + i),
    ])
    .join("\n")}\n`;
}

const labelsOf = (name: string) => ({ "app.kubernetes.io/name": name, app: name });

/** A port nothing listens on: bound, read, closed. */
function closedPort(hostname: string): number {
  const s = Bun.listen({ hostname, port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

export async function installGpuOperatorStandin(
  cluster: TestCluster,
  options: GpuOperatorStandinOptions = {},
): Promise<GpuOperatorStandin> {
  const api = standinApi(cluster);
  const host = hostAddress();
  let metricsMode: NonNullable<GpuOperatorStandinOptions["metrics"]> = "ok";
  let requests = 0;
  const server = Bun.serve({
    hostname: host,
    port: 0,
    fetch(req) {
      requests++;
      if (new URL(req.url).pathname !== "/metrics") return new Response("not found\n", { status: 404 });
      if (metricsMode === "error") return new Response("exporter failed\n", { status: 500 });
      const families =
        metricsMode === "missingFamily" ? DCGM_FAMILIES.filter((f) => f !== DROPPED_FAMILY) : DCGM_FAMILIES;
      return new Response(dcgmMetricsText(families), {
        headers: { "content-type": "text/plain; version=0.0.4" },
      });
    },
  });
  const deadPort = closedPort(host);
  await api.ensureNamespace(GPU_OPERATOR_NS);
  const standin: GpuOperatorStandin = {
    async set(o) {
      await Promise.all([
        o.operator && setOperator(api, o.operator),
        o.clusterPolicy && setClusterPolicy(api, o.clusterPolicy),
        o.dcgmExporter && setDcgmExporter(api, o.dcgmExporter),
        o.metrics &&
          (async () => {
            metricsMode = o.metrics!;
            await setMetricsEndpoint(
              api,
              o.metrics!,
              host,
              o.metrics === "unreachable" ? deadPort : server.port!,
            );
          })(),
      ]);
    },
    serverUrl: `http://${host}:${server.port}`,
    get requests() {
      return requests;
    },
    async stop() {
      await server.stop(true);
    },
  };
  try {
    await standin.set({
      operator: options.operator ?? "available",
      clusterPolicy: options.clusterPolicy ?? "ready",
      dcgmExporter: options.dcgmExporter ?? "ready",
      metrics: options.metrics ?? "ok",
    });
  } catch (e) {
    await server.stop(true);
    throw e;
  }
  return standin;
}

/**
 * The DCGM exporter DaemonSet alone, ready (its pods labelled app=nvidia-dcgm-exporter: what
 * pod-autoscaling looks for); returns its removal, resolved once its pods are gone.
 */
export async function installDcgmExporter(cluster: TestCluster): Promise<() => Promise<void>> {
  const api = standinApi(cluster);
  await api.ensureNamespace(GPU_OPERATOR_NS);
  await setDcgmExporter(api, "ready");
  return async () => {
    await setDcgmExporter(api, "absent");
    const pods = `${apiPath("v1", "pods", GPU_OPERATOR_NS)}?labelSelector=app%3D${DCGM_EXPORTER}`;
    await until(
      async () => ((await api.get(pods)) as { items?: unknown[] } | undefined)?.items?.length === 0,
      "the DCGM exporter's pods gone",
      60_000,
    );
  };
}

async function setOperator(api: StandinApi, mode: NonNullable<GpuOperatorStandinOptions["operator"]>) {
  const path = apiPath("apps/v1", "deployments", GPU_OPERATOR_NS, "gpu-operator");
  if (mode === "absent") {
    await api.remove(path);
    await until(async () => !(await api.get(path)), `${path} gone`);
    return;
  }
  const image = mode === "available" ? "nvcr.io/nvidia/gpu-operator:v25.10.1" : UNPULLABLE_IMAGE;
  await api.put(
    apiPath("apps/v1", "deployments", GPU_OPERATOR_NS),
    deploymentObject({
      namespace: GPU_OPERATOR_NS,
      name: "gpu-operator",
      labels: labelsOf("gpu-operator"),
      image,
    }),
  );
  await untilWorkload(api, path, mode === "available" ? "ready" : "unready");
}

async function setClusterPolicy(
  api: StandinApi,
  mode: NonNullable<GpuOperatorStandinOptions["clusterPolicy"]>,
) {
  const path = apiPath("nvidia.com/v1", "clusterpolicies", undefined, "cluster-policy");
  if (mode === "absent") {
    await api.remove(path);
    await until(async () => !(await api.get(path)), `${path} gone`);
    return;
  }
  await api.put(apiPath("nvidia.com/v1", "clusterpolicies"), {
    apiVersion: "nvidia.com/v1",
    kind: "ClusterPolicy",
    metadata: { name: "cluster-policy" },
    spec: { dcgmExporter: { enabled: true }, driver: { enabled: true } },
  });
  await api.setStatus(path, mode === "noState" ? {} : { state: mode, namespace: GPU_OPERATOR_NS });
}

async function setDcgmExporter(
  api: StandinApi,
  mode: NonNullable<GpuOperatorStandinOptions["dcgmExporter"]>,
) {
  const path = apiPath("apps/v1", "daemonsets", GPU_OPERATOR_NS, DCGM_EXPORTER);
  if (mode === "absent") {
    await api.remove(path);
    await until(async () => !(await api.get(path)), `${path} gone`);
    return;
  }
  const image =
    mode === "ready" ? "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04" : UNPULLABLE_IMAGE;
  await api.put(
    apiPath("apps/v1", "daemonsets", GPU_OPERATOR_NS),
    daemonSetObject({
      namespace: GPU_OPERATOR_NS,
      name: DCGM_EXPORTER,
      labels: labelsOf(DCGM_EXPORTER),
      image,
    }),
  );
  await untilWorkload(api, path, mode === "ready" ? "ready" : "unready");
}

const SLICE = `${DCGM_EXPORTER}-standin`;

async function setMetricsEndpoint(
  api: StandinApi,
  mode: NonNullable<GpuOperatorStandinOptions["metrics"]>,
  host: string,
  port: number,
) {
  const svc = apiPath("v1", "services", GPU_OPERATOR_NS, DCGM_EXPORTER);
  const slice = apiPath("discovery.k8s.io/v1", "endpointslices", GPU_OPERATOR_NS, SLICE);
  const endpoints = apiPath("v1", "endpoints", GPU_OPERATOR_NS, DCGM_EXPORTER);
  if (mode === "absent") {
    await Promise.all([api.remove(slice), api.remove(endpoints), api.remove(svc)]);
    await until(async () => !(await api.get(svc)) && !(await api.get(slice)), `${svc} and its slice gone`);
    return;
  }
  const ready = mode !== "notReady";
  await api.put(apiPath("v1", "services", GPU_OPERATOR_NS), {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: DCGM_EXPORTER, namespace: GPU_OPERATOR_NS, labels: labelsOf(DCGM_EXPORTER) },
    spec: { ports: [{ name: "gpu-metrics", port: DCGM_PORT, targetPort: port, protocol: "TCP" }] },
  });
  await api.put(apiPath("discovery.k8s.io/v1", "endpointslices", GPU_OPERATOR_NS), {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: SLICE,
      namespace: GPU_OPERATOR_NS,
      labels: {
        "kubernetes.io/service-name": DCGM_EXPORTER,
        "endpointslice.kubernetes.io/managed-by": "standin.aicr.test",
      },
    },
    addressType: "IPv4",
    ports: [{ name: "gpu-metrics", port, protocol: "TCP" }],
    endpoints: [{ addresses: [host], conditions: { ready, serving: ready, terminating: false } }],
  });
  // The legacy object, for readers that still use it; never mirrored into a second EndpointSlice.
  const address = [{ ip: host }];
  await api.put(apiPath("v1", "endpoints", GPU_OPERATOR_NS), {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: {
      name: DCGM_EXPORTER,
      namespace: GPU_OPERATOR_NS,
      labels: { "endpointslice.kubernetes.io/skip-mirror": "true" },
    },
    subsets: [
      {
        ...(ready ? { addresses: address } : { notReadyAddresses: address }),
        ports: [{ name: "gpu-metrics", port, protocol: "TCP" }],
      },
    ],
  });
}

/**
 * Stand-ins for a GPU cluster's metrics pipeline, served from the test process at this host's address
 * (_host.ts) and wired into a real test cluster as Kubernetes objects:
 *
 *   const prom = await startPrometheus(cluster);            // monitoring/prometheus-k8s :9090
 *   prom.mode = "empty";                                     // no series (a pipeline that lost DCGM)
 *   const api = await startMetricsApi(cluster);              // v1beta1.{custom,external}.metrics.k8s.io
 *   api.powerUsage = "0";                                    // the external metric the HPAs read
 *   await prom.stop(); await api.stop();
 *
 * (The DCGM exporter's pods are the GPU Operator stand-in's: gpu-operator.ts installDcgmExporter.)
 *
 * Prometheus answers /api/v1/query?query=<q> with an instant vector of DCGM_FI_DEV_GPU_UTIL series
 * (mode "ok"), an empty vector ("empty"), or a 500 ("error"). The metrics API server is an HTTPS server
 * registered as the two APIServices (insecureSkipTLSVerify; the apiserver reaches it at the Service's
 * endpoint address, --enable-aggregator-routing): discovery, the custom pod metrics gpu_utilization,
 * gpu_memory_used and gpu_power_usage of the pods in `customNamespaces` (MetricValueList), and the
 * external dcgm_gpu_power_usage in every namespace (ExternalMetricValueList) — the real HPA controller
 * reads it, so changing `powerUsage` scales an HPA's Deployment for real.
 */
import { until } from "../../support/until.ts";
import type { TestCluster } from "../testbed.ts";
import {
  adminClient,
  ensureNamespace,
  exposeOnHost,
  hostAddress,
  selfSignedServing,
  unexposeOnHost,
} from "./_host.ts";

export const MONITORING_NS = "monitoring";
export const PROMETHEUS_SERVICE = "prometheus-k8s";
export const ADAPTER_SERVICE = "prometheus-adapter";
export const GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL";
export const CUSTOM_METRICS = ["gpu_utilization", "gpu_memory_used", "gpu_power_usage"] as const;
export const EXTERNAL_METRIC = "dcgm_gpu_power_usage";

export type PrometheusMode = "ok" | "empty" | "error";

export interface PrometheusStandin {
  /** What the next query gets. */
  mode: PrometheusMode;
  /** Queries answered so far. */
  readonly queries: number;
  /** The server's own URL (this host's address). */
  readonly url: string;
  stop(): Promise<void>;
}

export interface PrometheusOptions {
  mode?: PrometheusMode;
  /** Series in an "ok" answer (default 2: one per GPU). */
  series?: number;
  /** Labels on the Service (default app.kubernetes.io/name=prometheus, as kube-prometheus-stack's). */
  labels?: Record<string, string>;
  /** The Service's port (default 9090). */
  port?: number;
}

function vector(series: number): unknown[] {
  const now = Date.now() / 1000;
  return Array.from({ length: series }, (_, i) => ({
    metric: {
      __name__: GPU_UTIL,
      gpu: String(i),
      Hostname: "gpu-node-1",
      container: "nvidia-dcgm-exporter",
      namespace: "gpu-operator",
    },
    value: [now, String(10 * (i + 1))],
  }));
}

/** A Prometheus HTTP API behind Service monitoring/prometheus-k8s (port 9090 → this process). */
export async function startPrometheus(
  cluster: TestCluster,
  o: PrometheusOptions = {},
): Promise<PrometheusStandin> {
  let queries = 0;
  const state = { mode: o.mode ?? "ok" };
  const server = Bun.serve({
    hostname: hostAddress(),
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      if (url.pathname !== "/api/v1/query") return new Response("404 page not found\n", { status: 404 });
      queries++;
      if (state.mode === "error")
        return Response.json(
          { status: "error", errorType: "internal", error: "query processing failed" },
          { status: 500 },
        );
      const result =
        state.mode === "ok" && url.searchParams.get("query") === GPU_UTIL ? vector(o.series ?? 2) : [];
      return Response.json({ status: "success", data: { resultType: "vector", result } });
    },
  });
  const client = adminClient(cluster);
  await exposeOnHost(
    client,
    {
      namespace: MONITORING_NS,
      name: PROMETHEUS_SERVICE,
      port: o.port ?? 9090,
      portName: "web",
      labels: o.labels ?? { "app.kubernetes.io/name": "prometheus", "self-monitor": "true" },
    },
    server.port as number,
  );
  return {
    get mode() {
      return state.mode;
    },
    set mode(m: PrometheusMode) {
      state.mode = m;
    },
    get queries() {
      return queries;
    },
    url: `http://${hostAddress()}:${server.port}`,
    async stop() {
      await unexposeOnHost(client, { namespace: MONITORING_NS, name: PROMETHEUS_SERVICE });
      client.close();
      await server.stop(true);
    },
  };
}

export interface MetricsApiStandin {
  /** The custom pod metrics: "ok" (one item per pod), "empty" (no items). */
  custom: "ok" | "empty";
  /** The external dcgm_gpu_power_usage value (a quantity, watts); undefined: the metric is not served. */
  powerUsage: string | undefined;
  /** Paths requested so far (the HPA controller's and the checks'). */
  readonly requests: string[];
  stop(): Promise<void>;
}

export interface MetricsApiOptions {
  /** Default "ok". */
  custom?: "ok" | "empty";
  /** Default "250" (an idle H100 draws well above the checks' 10 W target). */
  powerUsage?: string;
  /** Where the custom pod metrics have pods (default gpu-operator). */
  customNamespaces?: string[];
}

const CUSTOM_GV = "custom.metrics.k8s.io/v1beta1";
const EXTERNAL_GV = "external.metrics.k8s.io/v1beta1";

const resourceList = (groupVersion: string, resources: { name: string; kind: string }[]) => ({
  kind: "APIResourceList",
  apiVersion: "v1",
  groupVersion,
  resources: resources.map((r) => ({
    name: r.name,
    singularName: "",
    namespaced: true,
    kind: r.kind,
    verbs: ["get"],
  })),
});

const apiService = (group: string) => ({
  apiVersion: "apiregistration.k8s.io/v1",
  kind: "APIService",
  metadata: { name: `v1beta1.${group}` },
  spec: {
    group,
    version: "v1beta1",
    service: { namespace: MONITORING_NS, name: ADAPTER_SERVICE, port: 443 },
    insecureSkipTLSVerify: true,
    groupPriorityMinimum: 100,
    versionPriority: 100,
  },
});

/**
 * prometheus-adapter's APIs: an HTTPS server here, Service monitoring/prometheus-adapter, and the two
 * APIServices, resolved once both report Available.
 */
export async function startMetricsApi(
  cluster: TestCluster,
  o: MetricsApiOptions = {},
): Promise<MetricsApiStandin> {
  const state = { custom: o.custom ?? "ok", powerUsage: o.powerUsage ?? ("250" as string | undefined) };
  const customNamespaces = o.customNamespaces ?? ["gpu-operator"];
  const requests: string[] = [];
  const tls = selfSignedServing([`${ADAPTER_SERVICE}.${MONITORING_NS}.svc`]);
  const now = () => new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const server = Bun.serve({
    hostname: hostAddress(),
    port: 0,
    tls,
    fetch(req) {
      const path = new URL(req.url).pathname;
      requests.push(path);
      if (path === `/apis/${CUSTOM_GV}`)
        return Response.json(
          resourceList(
            CUSTOM_GV,
            CUSTOM_METRICS.map((m) => ({ name: `pods/${m}`, kind: "MetricValueList" })),
          ),
        );
      if (path === `/apis/${EXTERNAL_GV}`)
        return Response.json(
          resourceList(EXTERNAL_GV, [{ name: EXTERNAL_METRIC, kind: "ExternalMetricValueList" }]),
        );
      const custom = path.match(
        /^\/apis\/custom\.metrics\.k8s\.io\/v1beta1\/namespaces\/([^/]+)\/pods\/([^/]+)\/([^/]+)$/,
      );
      if (custom) {
        const [, ns = "", pod = "", metric = ""] = custom;
        if (!(CUSTOM_METRICS as readonly string[]).includes(metric))
          return notFound(`the server could not find the metric ${metric} for pods`);
        const items =
          state.custom === "ok" && customNamespaces.includes(ns)
            ? [pod === "*" ? "nvidia-dcgm-exporter-standin" : pod].map((name) => ({
                describedObject: { kind: "Pod", namespace: ns, name, apiVersion: "/v1" },
                metricName: metric,
                timestamp: now(),
                value: metric === "gpu_memory_used" ? "1024" : "42",
                selector: null,
              }))
            : [];
        return Response.json({ kind: "MetricValueList", apiVersion: CUSTOM_GV, metadata: {}, items });
      }
      const external = path.match(
        /^\/apis\/external\.metrics\.k8s\.io\/v1beta1\/namespaces\/([^/]+)\/([^/]+)$/,
      );
      if (external) {
        const metric = external[2];
        if (metric !== EXTERNAL_METRIC || state.powerUsage === undefined)
          return notFound(
            `the server could not find the requested resource (get ${metric}.external.metrics.k8s.io)`,
          );
        return Response.json({
          kind: "ExternalMetricValueList",
          apiVersion: EXTERNAL_GV,
          metadata: {},
          items: [
            { metricName: EXTERNAL_METRIC, metricLabels: {}, timestamp: now(), value: state.powerUsage },
          ],
        });
      }
      return notFound("the server could not find the requested resource");
    },
  });
  const client = adminClient(cluster);
  await ensureNamespace(client, MONITORING_NS);
  await exposeOnHost(
    client,
    { namespace: MONITORING_NS, name: ADAPTER_SERVICE, port: 443, portName: "https" },
    server.port as number,
  );
  const groups = ["custom.metrics.k8s.io", "external.metrics.k8s.io"];
  for (const g of groups) await client.create(apiService(g));
  await until(
    async () => {
      for (const g of groups) {
        const s = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>({
          apiVersion: "apiregistration.k8s.io/v1",
          kind: "APIService",
          name: `v1beta1.${g}`,
        });
        if (!s.status?.conditions?.some((c) => c.type === "Available" && c.status === "True")) return false;
      }
      // The aggregator serves the group a moment after the condition: a discovery read answers.
      await client.getPath(`/apis/${CUSTOM_GV}`);
      await client.getPath(`/apis/${EXTERNAL_GV}`);
      return true;
    },
    "the custom and external metrics APIServices Available and served",
    { ms: 60_000, everyMs: 200 },
  );
  return {
    get custom() {
      return state.custom;
    },
    set custom(v) {
      state.custom = v;
    },
    get powerUsage() {
      return state.powerUsage;
    },
    set powerUsage(v) {
      state.powerUsage = v;
    },
    requests,
    async stop() {
      for (const g of groups)
        await client
          .delete({ apiVersion: "apiregistration.k8s.io/v1", kind: "APIService", name: `v1beta1.${g}` })
          .catch(() => {});
      await unexposeOnHost(client, { namespace: MONITORING_NS, name: ADAPTER_SERVICE });
      client.close();
      await server.stop(true);
    },
  };
}

function notFound(message: string): Response {
  return Response.json(
    {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message,
      reason: "NotFound",
      code: 404,
    },
    { status: 404 },
  );
}

/**
 * ai-service-metrics (CNCF accelerator_metrics): DCGM series reach Prometheus, and the custom metrics
 * API (prometheus-adapter) is served. Prometheus is the recipe's kube-prometheus-stack component: its
 * Service found by label in that namespace, reached at the Service's ready endpoint (read from its
 * EndpointSlices, no cluster DNS needed). The query is retried while it has no series, for up to 2
 * minutes. Never skips; creates nothing.
 */
import {
  CUSTOM_METRICS_PATH,
  componentNamespace,
  type MetricsApiRead,
  metricsApiEvidence,
  readMetricsApi,
} from "./_metrics.ts";
import { errorText } from "./_read-outcome.ts";
import { pollFor, serviceEndpointUrl } from "./_support.ts";
import { type CheckContext, type CheckRun, failed, passed, type Verdict } from "./context.ts";

export const PROMETHEUS_COMPONENT = "kube-prometheus-stack";
/** The component registry's namespace for kube-prometheus-stack. */
export const PROMETHEUS_DEFAULT_NS = "monitoring";
/** Services tried in this order; the first with port 9090 is Prometheus. */
export const PROMETHEUS_SELECTORS = ["app.kubernetes.io/name=prometheus", "self-monitor=true"] as const;
export const PROMETHEUS_PORT = 9090;
export const GPU_UTIL_QUERY = "DCGM_FI_DEV_GPU_UTIL";
/** The original's Prometheus wait and poll. */
export const PROMETHEUS_WAIT_MS = 120_000;
export const PROMETHEUS_POLL_MS = 10_000;

interface ServiceLike {
  metadata?: { name?: string };
  spec?: { ports?: { port?: number }[] };
}

/** The first Service with a port 9090 (pure). */
export const prometheusService = (services: readonly ServiceLike[]): string | undefined =>
  services.find((s) => (s.spec?.ports ?? []).some((p) => p.port === PROMETHEUS_PORT))?.metadata?.name;

/** One answer of the query API, read (pure). */
export type QueryAnswer =
  | { kind: "series"; status: string; count: number }
  | { kind: "empty"; status: string }
  | { kind: "http-error"; httpStatus: number }
  | { kind: "bad-json"; message: string };

export function readQueryAnswer(httpStatus: number, body: string): QueryAnswer {
  if (httpStatus !== 200) return { kind: "http-error", httpStatus };
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch (err) {
    return { kind: "bad-json", message: errorText(err) };
  }
  const o = doc !== null && typeof doc === "object" ? (doc as Record<string, unknown>) : {};
  const data =
    o.data !== null && typeof o.data === "object" ? (o.data as Record<string, unknown>) : undefined;
  if (!data || !Array.isArray(data.result))
    return { kind: "bad-json", message: "no data.result list in the answer" };
  const status = typeof o.status === "string" ? o.status : "(none)";
  return data.result.length > 0
    ? { kind: "series", status, count: data.result.length }
    : { kind: "empty", status };
}

/** How the Prometheus part ended. */
export type PrometheusOutcome =
  | { kind: "no-recipe" }
  | { kind: "no-component" }
  | { kind: "list-error"; namespace: string; message: string }
  | { kind: "no-service"; namespace: string }
  | { kind: "no-endpoint"; namespace: string; service: string }
  | { kind: "transport-error"; url: string; message: string }
  | { kind: "answer"; url: string; answer: QueryAnswer }
  | { kind: "window-over"; url: string; queries: number; waitedMs: number; deadline: boolean };

const seconds = (ms: number) => `${Math.round(ms / 100) / 10}s`;

/** The verdict (pure): Prometheus first, then the custom metrics API. */
export function aiServiceMetricsVerdict(p: PrometheusOutcome, api: MetricsApiRead | undefined): Verdict {
  switch (p.kind) {
    case "no-recipe":
      return failed(
        `no recipe: ai-service-metrics finds Prometheus through the recipe's ${PROMETHEUS_COMPONENT} component`,
      );
    case "no-component":
      return failed(
        `the recipe has no ${PROMETHEUS_COMPONENT} component: no Prometheus to query for DCGM metrics`,
      );
    case "list-error":
      return failed(`cannot list the Services of namespace ${p.namespace}: ${p.message}`);
    case "no-service":
      return failed(
        `no Prometheus Service with port ${PROMETHEUS_PORT} in namespace ${p.namespace} (labels tried: ${PROMETHEUS_SELECTORS.join(", then ")})`,
      );
    case "no-endpoint":
      return failed(
        `Service ${p.namespace}/${p.service} has no ready endpoint: Prometheus is not ready to answer queries`,
      );
    case "transport-error":
      return failed(`Prometheus did not answer GET ${p.url}: ${p.message}`);
    case "window-over":
      return failed(
        p.deadline
          ? `the check's deadline ended while Prometheus still had no ${GPU_UTIL_QUERY} series (${p.queries} queries)`
          : `Prometheus has no ${GPU_UTIL_QUERY} series after ${seconds(p.waitedMs)} (${p.queries} queries): DCGM metrics do not reach Prometheus`,
      );
    case "answer": {
      const a = p.answer;
      if (a.kind === "http-error")
        return failed(`Prometheus answered GET ${p.url} with HTTP ${a.httpStatus}, expected 200`);
      if (a.kind === "bad-json")
        return failed(`Prometheus's answer to GET ${p.url} is not a query result: ${a.message}`);
      if (a.kind === "empty") return failed(`Prometheus has no ${GPU_UTIL_QUERY} series`);
      if (!api) return failed("the custom metrics API was not read");
      if (!api.ok)
        return failed(`the custom metrics API is not served: GET ${CUSTOM_METRICS_PATH}: ${api.message}`, [
          `Prometheus: ${a.count} ${GPU_UTIL_QUERY} series`,
        ]);
      return passed(
        `Prometheus has ${a.count} ${GPU_UTIL_QUERY} series and the custom metrics API (${api.groupVersion}) serves ${api.resources.length} resource(s)`,
        [`Prometheus query: ${p.url}`, ...api.resources.slice(0, 20).map((r) => `custom metric: ${r.name}`)],
      );
    }
  }
}

/** Finds Prometheus and queries it until it has series, the window ends, or an answer fails. */
export async function queryPrometheus(
  ctx: Pick<CheckContext, "client" | "recipe" | "httpGet" | "sleep" | "now" | "signal" | "waitMs">,
  onAnswer: (a: { namespace: string; service: string; url: string; status: number; body: string }) => void,
): Promise<PrometheusOutcome> {
  if (!ctx.recipe) return { kind: "no-recipe" };
  const component = componentNamespace(
    ctx.recipe.spec.componentRefs,
    PROMETHEUS_COMPONENT,
    PROMETHEUS_DEFAULT_NS,
  );
  if (!component.listed) return { kind: "no-component" };
  const { namespace } = component;
  let service: string | undefined;
  try {
    for (const labelSelector of PROMETHEUS_SELECTORS) {
      const list = await ctx.client.list<ServiceLike>("v1", "Service", { namespace, labelSelector });
      service = prometheusService(list.items);
      if (service) break;
    }
  } catch (err) {
    return { kind: "list-error", namespace, message: errorText(err) };
  }
  if (!service) return { kind: "no-service", namespace };
  let base: string | undefined;
  try {
    base = await serviceEndpointUrl(ctx.client, namespace, service, PROMETHEUS_PORT);
  } catch (err) {
    return { kind: "list-error", namespace, message: errorText(err) };
  }
  if (!base) return { kind: "no-endpoint", namespace, service };
  const url = `${base}/api/v1/query?query=${GPU_UTIL_QUERY}`;
  const started = ctx.now();
  let queries = 0;
  const ended = await pollFor(
    ctx,
    { intervalMs: ctx.waitMs(PROMETHEUS_POLL_MS), maxMs: ctx.waitMs(PROMETHEUS_WAIT_MS) },
    async (): Promise<PrometheusOutcome | undefined> => {
      let res: { status: number; body: string };
      queries++;
      try {
        res = await ctx.httpGet(url);
      } catch (err) {
        if (ctx.signal.aborted) return undefined;
        return { kind: "transport-error", url, message: errorText(err) };
      }
      onAnswer({ namespace, service, url, status: res.status, body: res.body });
      const answer = readQueryAnswer(res.status, res.body);
      return answer.kind === "empty" ? undefined : { kind: "answer", url, answer };
    },
  ).catch((err) => {
    if (ctx.signal.aborted) return undefined;
    throw err;
  });
  return (
    ended ?? {
      kind: "window-over",
      url,
      queries,
      waitedMs: ctx.now() - started,
      deadline: ctx.signal.aborted,
    }
  );
}

/** `--- Prometheus Query ---` data: the status and the number of series (pure). */
export function queryEvidence(url: string, httpStatus: number, body: string): string {
  const a = readQueryAnswer(httpStatus, body);
  const lines = [`URL: ${url}`, `HTTP status: ${httpStatus}`];
  if (a.kind === "series" || a.kind === "empty")
    lines.push(`Status: ${a.status}`, `Series: ${a.kind === "series" ? a.count : 0}`);
  else if (a.kind === "bad-json") lines.push(`Not a query result: ${a.message}`);
  return lines.join("\n");
}

export const run: CheckRun = async (ctx) => {
  let last: Parameters<Parameters<typeof queryPrometheus>[1]>[0] | undefined;
  const prometheus = await queryPrometheus(ctx, (answer) => {
    last = answer;
  });
  if (last) {
    const proxied = `kubectl get --raw '/api/v1/namespaces/${last.namespace}/services/${last.service}:${PROMETHEUS_PORT}/proxy/api/v1/query?query=${GPU_UTIL_QUERY}'`;
    ctx.evidence(
      `Prometheus Query: ${GPU_UTIL_QUERY}`,
      queryEvidence(last.url, last.status, last.body),
      proxied,
    );
    ctx.evidence("Prometheus query response (GPU util)", last.body);
  }
  const ok = prometheus.kind === "answer" && prometheus.answer.kind === "series";
  const api = ok ? await readMetricsApi(ctx.client, CUSTOM_METRICS_PATH) : undefined;
  if (api)
    ctx.evidence("Custom Metrics API", metricsApiEvidence(api), `kubectl get --raw ${CUSTOM_METRICS_PATH}`);
  return aiServiceMetricsVerdict(prometheus, api);
};

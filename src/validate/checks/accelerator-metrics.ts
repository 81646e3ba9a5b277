/**
 * accelerator-metrics (CNCF accelerator_metrics): the DCGM exporter serves the GPU metrics a
 * conformant cluster must expose. One plain GET of its /metrics, no retry, at the ready endpoint of
 * Service gpu-operator/nvidia-dcgm-exporter read from its EndpointSlices (no cluster DNS needed).
 * Never skips; creates nothing.
 */
import { DCGM_EXPORTER, DCGM_PORT, GPU_OPERATOR_NS } from "./_gpu-operator.ts";
import { readOutcome } from "./_read-outcome.ts";
import { getOptional, serviceEndpointUrl } from "./_support.ts";
import { type CheckContext, type CheckRun, failed, passed, type Verdict } from "./context.ts";

/** The metric families required, each looked for as text anywhere in the answer (HELP/TYPE lines count). */
export const REQUIRED_DCGM_METRICS = [
  "DCGM_FI_DEV_GPU_UTIL",
  "DCGM_FI_DEV_FB_USED",
  "DCGM_FI_DEV_GPU_TEMP",
  "DCGM_FI_DEV_POWER_USAGE",
] as const;

const SAMPLE_LINES = 8;
const SERVICE = `Service ${GPU_OPERATOR_NS}/${DCGM_EXPORTER}`;
const RAW_PATH = `/api/v1/namespaces/${GPU_OPERATOR_NS}/services/${DCGM_EXPORTER}:${DCGM_PORT}/proxy/metrics`;

/** The first lines of the answer, and a mark when there were more (pure). */
export function metricsSample(body: string): string {
  const lines = body.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const head = lines.slice(0, SAMPLE_LINES).join("\n");
  return lines.length > SAMPLE_LINES ? `${head}\n... [truncated]` : head;
}

/** Each required family and whether the answer names it (pure). */
export const requiredMetrics = (body: string): { name: string; found: boolean }[] =>
  REQUIRED_DCGM_METRICS.map((name) => ({ name, found: body.includes(name) }));

/** What reaching the exporter came to: no endpoint to ask, a failed request, or its answer. */
export type MetricsFetch =
  | { kind: "no-service" }
  | { kind: "no-port"; ports: number[] }
  | { kind: "no-endpoint" }
  | { kind: "read-error"; message: string }
  | { kind: "transport-error"; url: string; message: string }
  | { kind: "answer"; url: string; status: number; body: string; truncated: boolean };

/** The verdict on what was fetched (pure); the evidence blocks are written from the same answer. */
export function metricsVerdict(f: MetricsFetch): Verdict {
  switch (f.kind) {
    case "no-service":
      return failed(`${SERVICE} not found: the DCGM exporter is not deployed`);
    case "no-port":
      return failed(
        `${SERVICE} has no port ${DCGM_PORT} (ports: ${f.ports.join(", ") || "none"}): the DCGM exporter cannot be reached`,
      );
    case "no-endpoint":
      return failed(
        `${SERVICE} has no ready endpoint: no DCGM exporter pod is ready to serve metrics on port ${DCGM_PORT}`,
      );
    case "read-error":
      return failed(f.message);
    case "transport-error":
      return failed(`the DCGM exporter did not answer GET ${f.url}: ${f.message}`);
    case "answer": {
      if (f.status !== 200)
        return failed(`the DCGM exporter answered GET ${f.url} with HTTP ${f.status}, expected 200`);
      const required = requiredMetrics(f.body);
      const details = required.map((m) => `${m.name}: ${m.found ? "FOUND" : "MISSING"}`);
      if (f.truncated) details.push("(only the first 1 MiB of the answer was read)");
      const missing = required.filter((m) => !m.found).map((m) => m.name);
      if (missing.length > 0)
        return failed(`the DCGM exporter does not serve required metric(s): ${missing.join(", ")}`, details);
      return passed(
        `the DCGM exporter at ${f.url} serves all ${required.length} required GPU metrics`,
        details,
      );
    }
  }
}

/** Finds the exporter's ready endpoint and GETs its /metrics once. */
export async function fetchDcgmMetrics(ctx: Pick<CheckContext, "client" | "httpGet">): Promise<MetricsFetch> {
  const svc = await readOutcome(() =>
    getOptional<{ spec?: { ports?: { port?: number }[] } }>(ctx.client, {
      apiVersion: "v1",
      kind: "Service",
      namespace: GPU_OPERATOR_NS,
      name: DCGM_EXPORTER,
    }),
  );
  if (svc.state === "error") return { kind: "read-error", message: svc.message };
  if (svc.state === "absent") return { kind: "no-service" };
  const ports = (svc.value.spec?.ports ?? []).map((p) => p.port ?? 0);
  if (!ports.includes(DCGM_PORT)) return { kind: "no-port", ports };
  const base = await readOutcome(() =>
    serviceEndpointUrl(ctx.client, GPU_OPERATOR_NS, DCGM_EXPORTER, DCGM_PORT),
  );
  if (base.state === "error") return { kind: "read-error", message: base.message };
  if (base.state === "absent") return { kind: "no-endpoint" };
  const url = `${base.value}/metrics`;
  try {
    const res = await ctx.httpGet(url);
    return { kind: "answer", url, ...res };
  } catch (err) {
    return { kind: "transport-error", url, message: transportText(err) };
  }
}

/** A failed request in a few words: the error's code (ECONNREFUSED, TimeoutError) and its message. */
function transportText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  const name = err.name !== "Error" ? err.name : undefined;
  const tag = typeof code === "string" ? code : name;
  return tag && !err.message.includes(tag) ? `${tag}: ${err.message}` : err.message;
}

export const run: CheckRun = async (ctx) => {
  const f = await fetchDcgmMetrics(ctx);
  if (f.kind === "answer" && f.status === 200) {
    ctx.evidence("DCGM Exporter Metrics (sample)", metricsSample(f.body), `kubectl get --raw ${RAW_PATH}`);
    ctx.evidence(
      "Required DCGM Metrics",
      requiredMetrics(f.body)
        .map((m) => `${m.name}: ${m.found ? "FOUND" : "MISSING"}`)
        .join("\n"),
    );
  }
  return metricsVerdict(f);
};

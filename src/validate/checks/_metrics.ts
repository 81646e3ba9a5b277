/**
 * What ai-service-metrics and pod-autoscaling share: a recipe component's namespace (componentRefs is
 * untyped, read defensively), the aggregated metrics APIs read through the apiserver (discovery and
 * metric lists), and their evidence lines.
 */
import type { KubeClient } from "../../kube/client.ts";
import { KubeStatusError } from "../../kube/errors.ts";
import { errorText } from "./_read-outcome.ts";

export const CUSTOM_METRICS_GV = "custom.metrics.k8s.io/v1beta1";
export const EXTERNAL_METRICS_GV = "external.metrics.k8s.io/v1beta1";
export const CUSTOM_METRICS_PATH = `/apis/${CUSTOM_METRICS_GV}`;

/**
 * A component of the recipe by name: found, with its namespace (the component's own, else `fallback`,
 * the registry's default), or not listed (pure; `componentRefs` may be anything).
 */
export function componentNamespace(
  componentRefs: unknown,
  component: string,
  fallback: string,
): { listed: false } | { listed: true; namespace: string } {
  if (!Array.isArray(componentRefs)) return { listed: false };
  for (const raw of componentRefs) {
    const ref = raw !== null && typeof raw === "object" ? (raw as Record<string, unknown>) : undefined;
    if (ref?.name !== component) continue;
    const ns = typeof ref.namespace === "string" ? ref.namespace.trim() : "";
    return { listed: true, namespace: ns || fallback };
  }
  return { listed: false };
}

/** The names of the recipe's components, in order (pure). */
export function componentNames(componentRefs: unknown): string[] {
  if (!Array.isArray(componentRefs)) return [];
  return componentRefs.flatMap((raw) => {
    const name = raw !== null && typeof raw === "object" ? (raw as { name?: unknown }).name : undefined;
    return typeof name === "string" && name !== "" ? [name] : [];
  });
}

/** The HTTP status of a failed API request, when the apiserver answered. */
export const httpStatusOf = (err: unknown): number | undefined =>
  err instanceof KubeStatusError ? err.httpStatus : undefined;

/** A failed API read in a few words: `HTTP 503: <the apiserver's message>` or the transport's error. */
export function apiFailure(err: unknown): string {
  if (err instanceof KubeStatusError) return `HTTP ${err.httpStatus}: ${err.status.message}`;
  return errorText(err);
}

export interface ApiResourceListRead {
  ok: true;
  groupVersion: string;
  resources: { name: string; namespaced: boolean }[];
}
export type MetricsApiRead =
  | ApiResourceListRead
  | { ok: false; status?: number | undefined; message: string };

/** A discovery answer as an APIResourceList `{groupVersion, resources[{name, namespaced}]}`, or why not (pure). */
export function decodeResourceList(body: unknown): ApiResourceListRead | { ok: false; message: string } {
  const o = body !== null && typeof body === "object" ? (body as Record<string, unknown>) : undefined;
  if (!o || typeof o.groupVersion !== "string" || !Array.isArray(o.resources))
    return { ok: false, message: "the answer is not an API resource list (groupVersion, resources)" };
  const resources: { name: string; namespaced: boolean }[] = [];
  for (const r of o.resources) {
    const name = r !== null && typeof r === "object" ? (r as { name?: unknown }).name : undefined;
    if (typeof name !== "string")
      return { ok: false, message: "the answer is not an API resource list: a resource has no name" };
    resources.push({ name, namespaced: (r as { namespaced?: unknown }).namespaced === true });
  }
  return { ok: true, groupVersion: o.groupVersion, resources };
}

/** GET of a metrics API's discovery document through the apiserver, decoded. */
export async function readMetricsApi(client: KubeClient, path: string): Promise<MetricsApiRead> {
  let body: unknown;
  try {
    body = await client.getPath(path, `reading ${path}`);
  } catch (err) {
    return { ok: false, status: httpStatusOf(err), message: apiFailure(err) };
  }
  return decodeResourceList(body);
}

const MAX_LISTED = 20;

/** The `Custom Metrics API` evidence block: HTTP status, groupVersion, count, the first 20 resources (pure). */
export function metricsApiEvidence(read: MetricsApiRead): string {
  if (!read.ok) return `HTTP status: ${read.status ?? "no answer"}\nError: ${read.message}`;
  const shown = read.resources
    .slice(0, MAX_LISTED)
    .map((r) => `  ${r.name}${r.namespaced ? "" : " (cluster)"}`);
  return [
    "HTTP status: 200",
    `groupVersion: ${read.groupVersion}`,
    `Resources: ${read.resources.length}`,
    ...shown,
    ...(read.resources.length > MAX_LISTED ? [`  ... and ${read.resources.length - MAX_LISTED} more`] : []),
  ].join("\n");
}

/** The `items` of a metric list answer (MetricValueList / ExternalMetricValueList), defensively (pure). */
export function metricItems(body: unknown): unknown[] {
  const items = body !== null && typeof body === "object" ? (body as { items?: unknown }).items : undefined;
  return Array.isArray(items) ? items : [];
}

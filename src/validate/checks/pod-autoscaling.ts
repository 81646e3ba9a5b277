/**
 * pod-autoscaling (CNCF pod_autoscaling): GPU metrics flow DCGM → Prometheus → prometheus-adapter into
 * the custom and external metrics APIs, and a HorizontalPodAutoscaler on the external GPU power metric
 * scales a Deployment up, then back down once its target is raised out of reach. The Deployment (this
 * project's image running `aicr probe sleep 3600`) and the HPA live in the check's own namespace and are
 * deleted when it ends. Skips when no DCGM exporter pod runs.
 */
import { stringify } from "yaml";
import {
  type Created,
  createRecorded,
  deleteCreated,
  describeHpa,
  duration,
  HPA_INTENT_WAIT_MS,
  type HpaState,
  hpaWantsMore,
  type Manifest,
  POLL_MS,
  POWER_METRIC,
  POWER_TARGET,
  pollObject,
  powerHpa,
  refOf,
  sleepDeployment,
} from "./_autoscaling.ts";
import {
  apiFailure,
  CUSTOM_METRICS_PATH,
  EXTERNAL_METRICS_GV,
  httpStatusOf,
  metricItems,
  metricsApiEvidence,
  readMetricsApi,
} from "./_metrics.ts";
import { errorText } from "./_read-outcome.ts";
import { type CheckContext, type CheckRun, failed, passed, skipped, type Verdict } from "./context.ts";

export const DCGM_EXPORTER_SELECTOR = "app=nvidia-dcgm-exporter";
/** prometheus-adapter's custom pod metrics (renamed DCGM series), tried in this order. */
export const CUSTOM_METRICS = ["gpu_utilization", "gpu_memory_used", "gpu_power_usage"] as const;
export const CUSTOM_METRIC_NAMESPACES = ["gpu-operator", "dynamo-system"] as const;
export const CUSTOM_METRIC_ROUNDS = 12;
export const EXTERNAL_METRIC_PATH = `/apis/${EXTERNAL_METRICS_GV}/namespaces/default/${POWER_METRIC}`;
/** The original's Deployment scale waits (up, then down). */
export const SCALE_WAIT_MS = 120_000;
/** The target the check raises the HPA to, so that it scales back down. */
export const UNREACHABLE_TARGET = "999999";
export const MAX_REPLICAS = 3;

/** Every custom metric path tried in one round: each metric in each namespace (pure). */
export const customMetricPaths = (): string[] =>
  CUSTOM_METRICS.flatMap((m) =>
    CUSTOM_METRIC_NAMESPACES.map((ns) => `${CUSTOM_METRICS_PATH}/namespaces/${ns}/pods/*/${m}`),
  );

export type SampleOutcome =
  | { found: true; path: string; items: number; round: number }
  | { found: false; rounds: number; lastError: string | undefined };

/** Up to 12 rounds, 10 s apart: the first custom metric path with items. */
export async function findCustomMetric(
  ctx: Pick<CheckContext, "client" | "sleep" | "signal" | "waitMs">,
): Promise<SampleOutcome> {
  let lastError: string | undefined;
  let rounds = 0;
  for (let round = 1; round <= CUSTOM_METRIC_ROUNDS; round++) {
    rounds = round;
    for (const path of customMetricPaths()) {
      try {
        const items = metricItems(await ctx.client.getPath(path)).length;
        if (items > 0) return { found: true, path, items, round };
      } catch (err) {
        lastError = apiFailure(err);
      }
    }
    if (round === CUSTOM_METRIC_ROUNDS || ctx.signal.aborted) break;
    try {
      await ctx.sleep(ctx.waitMs(POLL_MS));
    } catch {
      break; // the check's deadline
    }
  }
  return { found: false, rounds, lastError };
}

export function sampleEvidence(s: SampleOutcome): string {
  if (s.found) return `Path: ${s.path}\nItems: ${s.items}`;
  return [
    `No custom GPU metric had values in ${s.rounds} round(s); paths tried each round:`,
    ...customMetricPaths().map((p) => `  ${p}`),
    ...(s.lastError ? [`Last error: ${s.lastError}`] : []),
  ].join("\n");
}

export type ExternalOutcome =
  | { ok: true; items: number; value: string | undefined }
  | { ok: false; status?: number | undefined; message: string };

/** The external metric's answer, read (pure). */
export function readExternal(body: unknown): ExternalOutcome {
  const items = metricItems(body);
  if (items.length === 0) return { ok: false, status: 200, message: "the answer has no items" };
  const value = (items[0] as { value?: unknown } | null)?.value;
  return { ok: true, items: items.length, value: typeof value === "string" ? value : undefined };
}

export function externalEvidence(e: ExternalOutcome): string {
  const head = `Path: ${EXTERNAL_METRIC_PATH}`;
  if (!e.ok) return `${head}\nHTTP status: ${e.status ?? "no answer"}\nError: ${e.message}`;
  return `${head}\nHTTP status: 200\nItems: ${e.items}${e.value !== undefined ? `\nValue: ${e.value}` : ""}`;
}

/** The verdict of the metric reads before the behavioural test (pure); undefined: go on. */
export function metricsVerdict(
  api: Awaited<ReturnType<typeof readMetricsApi>>,
  sample: SampleOutcome | undefined,
  external: ExternalOutcome | undefined,
  pollMs: number,
): Verdict | undefined {
  if (!api.ok)
    return failed(`the custom metrics API is not served: GET ${CUSTOM_METRICS_PATH}: ${api.message}`);
  if (sample && !sample.found)
    return failed(
      `no custom GPU metric (${CUSTOM_METRICS.join(", ")}) has values for pods in ${CUSTOM_METRIC_NAMESPACES.join(" or ")} after ${sample.rounds} round(s) ${duration(pollMs)} apart: prometheus-adapter serves no DCGM data`,
      sample.lastError ? [`last error: ${sample.lastError}`] : [],
    );
  if (external && !external.ok)
    return failed(
      `the external metric ${POWER_METRIC} cannot be read: GET ${EXTERNAL_METRIC_PATH}: ${external.message}`,
    );
  return undefined;
}

interface DeploymentState {
  status?: { replicas?: number; readyReplicas?: number };
}

const within = (ctx: Pick<CheckContext, "signal">, ms: number) =>
  ctx.signal.aborted ? "before the check's deadline ended" : `within ${duration(ms)}`;

/** Sets the first metric's target average to 999999 (GET, change, update; a conflict is retried). */
async function raiseTarget(ctx: Pick<CheckContext, "client">, hpa: Manifest): Promise<string | undefined> {
  let last = "";
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const live = await ctx.client.get<HpaState & Manifest>(refOf(hpa));
      const target = live.spec?.metrics?.[0]?.external?.target;
      if (!target) return "the HPA has no external metric target";
      target.averageValue = UNREACHABLE_TARGET;
      await ctx.client.update(live);
      return undefined;
    } catch (err) {
      last = apiFailure(err);
      if (!/^HTTP 409/.test(last)) return last;
    }
  }
  return last;
}

/** Creates the Deployment and its HPA, watches the HPA scale it up, raises the target, watches it come down. */
export async function hpaBehaviour(ctx: CheckContext): Promise<Verdict> {
  const name = ctx.name("hpa-test");
  const ns = ctx.testNamespace;
  const deployment = sleepDeployment(ctx, {
    name,
    container: "sleep",
    seconds: 3600,
    requests: { cpu: "10m", memory: "16Mi" },
  });
  const hpa = powerHpa(ctx, { name, deployment: name, maxReplicas: MAX_REPLICAS, scaleDownAtOnce: true });
  const created: Created[] = [];
  const steps: string[] = [];
  const started = ctx.now();
  const at = () => `[+${duration(ctx.now() - started)}]`;
  const poll = (maxMs: number) => ({ intervalMs: ctx.waitMs(POLL_MS), maxMs: ctx.waitMs(maxMs) });
  try {
    try {
      await createRecorded(ctx.client, deployment, created);
      await createRecorded(ctx.client, hpa, created);
    } catch (err) {
      return failed(`cannot create the test Deployment and HPA in namespace ${ns}: ${errorText(err)}`);
    } finally {
      ctx.evidence(
        "Apply test manifest",
        `${created.map((c) => `${c.ref.kind}/${c.ref.name} created in namespace ${ns}`).join("\n")}\n---\n${stringify(deployment)}---\n${stringify(hpa)}`,
        "kubectl apply -f <manifest>",
      );
    }
    const intent = await pollObject<HpaState>(ctx, refOf(hpa), poll(HPA_INTENT_WAIT_MS), hpaWantsMore);
    steps.push(`${at()} HPA ${name}: ${describeHpa(intent.last)}`);
    if (!intent.ok)
      return failed(
        `HPA ${ns}/${name} did not ask for more than 1 replica ${within(ctx, ctx.waitMs(HPA_INTENT_WAIT_MS))} (${POWER_METRIC} against a target average of ${POWER_TARGET}): ${describeHpa(intent.last)}`,
        intent.lastError ? [`last read error: ${intent.lastError}`] : [],
      );
    const wanted = intent.last?.status?.desiredReplicas ?? 0;
    const up = await pollObject<DeploymentState>(
      ctx,
      refOf(deployment),
      poll(SCALE_WAIT_MS),
      (d) => (d.status?.replicas ?? 0) > 1,
    );
    const peak = up.last?.status?.replicas ?? 0;
    steps.push(`${at()} Deployment ${name}: ${peak} replica(s) (the HPA asked for ${wanted})`);
    if (!up.ok)
      return failed(
        `Deployment ${ns}/${name} did not scale above 1 replica ${within(ctx, ctx.waitMs(SCALE_WAIT_MS))}: status.replicas ${peak}, though the HPA asked for ${wanted}`,
      );
    const refused = await raiseTarget(ctx, hpa);
    if (refused)
      return failed(`cannot raise HPA ${ns}/${name}'s target to ${UNREACHABLE_TARGET}: ${refused}`);
    steps.push(`${at()} HPA ${name}: target average raised to ${UNREACHABLE_TARGET}`);
    const down = await pollObject<DeploymentState>(
      ctx,
      refOf(deployment),
      poll(SCALE_WAIT_MS),
      (d) => (d.status?.replicas ?? 0) <= 1,
    );
    const final = down.last?.status?.replicas ?? 0;
    steps.push(`${at()} Deployment ${name}: ${final} replica(s)`);
    if (!down.ok)
      return failed(
        `Deployment ${ns}/${name} did not scale back to 1 replica ${within(ctx, ctx.waitMs(SCALE_WAIT_MS))} after the HPA's target was raised to ${UNREACHABLE_TARGET}: status.replicas ${final}`,
      );
    return passed(
      `HPA ${name} scaled its Deployment from 1 to ${peak} replicas on ${POWER_METRIC} and back to ${final} once its target was raised`,
      steps,
    );
  } finally {
    if (steps.length > 0) ctx.evidence("HPA Behavioral Test", steps.join("\n"));
    const gone = await deleteCreated(ctx.client, created);
    if (gone.length > 0)
      ctx.evidence(
        "Delete test namespace",
        `${gone.join(", ")} deleted from namespace ${ns} (the run deletes the namespace itself)`,
        `kubectl -n ${ns} delete horizontalpodautoscaler,deployment ${name}`,
      );
  }
}

export const run: CheckRun = async (ctx) => {
  let exporters: number;
  try {
    exporters = (await ctx.client.list("v1", "Pod", { labelSelector: DCGM_EXPORTER_SELECTOR })).items.length;
  } catch (err) {
    return skipped(`cannot list the DCGM exporter's pods (${DCGM_EXPORTER_SELECTOR}): ${errorText(err)}`);
  }
  if (exporters === 0)
    return skipped(
      `no DCGM exporter pod (label ${DCGM_EXPORTER_SELECTOR}) in any namespace: no GPU metrics to autoscale on`,
    );

  const api = await readMetricsApi(ctx.client, CUSTOM_METRICS_PATH);
  ctx.evidence("Custom Metrics API", metricsApiEvidence(api), `kubectl get --raw ${CUSTOM_METRICS_PATH}`);
  const early = metricsVerdict(api, undefined, undefined, ctx.waitMs(POLL_MS));
  if (early) return early;

  const sample = await findCustomMetric(ctx);
  ctx.evidence(
    "Custom metric sample",
    sampleEvidence(sample),
    sample.found ? `kubectl get --raw '${sample.path}'` : undefined,
  );
  const noSample = metricsVerdict(api, sample, undefined, ctx.waitMs(POLL_MS));
  if (noSample) return noSample;

  let external: ExternalOutcome;
  try {
    external = readExternal(await ctx.client.getPath(EXTERNAL_METRIC_PATH));
  } catch (err) {
    external = { ok: false, status: httpStatusOf(err), message: apiFailure(err) };
  }
  ctx.evidence(
    "External Metrics API",
    externalEvidence(external),
    `kubectl get --raw ${EXTERNAL_METRIC_PATH}`,
  );
  const noExternal = metricsVerdict(api, sample, external, ctx.waitMs(POLL_MS));
  if (noExternal) return noExternal;

  return hpaBehaviour(ctx);
};

/**
 * -o cm://<ns>/<name>: the merged CTRF JSON, server-side applied (manager aicr) under the key
 * report.json. The ConfigMap is the user's: it carries no run-ID label, is never journalled, and no
 * cleanup or `aicr runs delete` removes it.
 */
import { retry } from "../core/async.ts";
import { AicrError } from "../core/errors.ts";
import { LABEL, LABEL_VALUE } from "../core/labels.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
import { isForbidden, isNotFound, isTransient, toAicrError } from "../kube/errors.ts";
import { passGate } from "../kube/gate.ts";
import type { AccessCheck } from "../kube/reviews.ts";
import { ensureNamespace } from "../run/namespace.ts";
import type { ConfigMapRef } from "../snapshot/cm-uri.ts";
import { REPORT_CONFIGMAP_KEY } from "./options.ts";

export const REPORT_COMPONENT = "validation-report";
const RUN_ID_ANNOTATION = "aicr.run/last-run-id";

/** What writing the report takes: read it (the gate's own check), create it, and apply over it. */
export function reportChecks(ref: ConfigMapRef): AccessCheck[] {
  const cm = { group: "", resource: "configmaps", namespace: ref.namespace };
  return [
    { verb: "get", ...cm, name: ref.name },
    { verb: "create", ...cm },
    { verb: "patch", ...cm, name: ref.name },
  ];
}

/**
 * Before anything is deployed: the caller may write the report, and an existing ConfigMap of that
 * name is aicr's (labelled app.kubernetes.io/name=aicr), never a stranger's written over.
 */
export async function checkReportTarget(
  client: KubeClient,
  ref: ConfigMapRef,
  signal: AbortSignal,
): Promise<void> {
  const uri = `cm://${ref.namespace}/${ref.name}`;
  await passGate(
    client,
    { access: reportChecks(ref) },
    {
      signal,
      refusal: {
        message: (missing) =>
          `missing ${missing.length} permission(s) to write the report to ${uri}; nothing was created:\n  ${missing.join("\n  ")}`,
        remedy: `ask for get, create and patch on configmaps in namespace ${ref.namespace}, or write the report to a file with -o <file>`,
        context: (missing) => ({ field: "--output", missing }),
      },
    },
  );
  let live: KubeObject;
  try {
    live = await client.get({ apiVersion: "v1", kind: "ConfigMap", ...ref });
  } catch (err) {
    if (isNotFound(err)) return;
    if (isForbidden(err))
      throw new AicrError(
        "UNAUTHORIZED",
        `cannot read ConfigMap ${ref.namespace}/${ref.name} (--output ${uri})`,
        {
          remedy: `ask for get on configmaps in namespace ${ref.namespace}`,
          context: { field: "--output" },
          cause: err,
        },
      );
    throw toAicrError(err, `reading ConfigMap ${ref.namespace}/${ref.name}`, client.server);
  }
  if (live.metadata?.labels?.[LABEL.name] === LABEL_VALUE.app) return;
  throw new AicrError(
    "CONFLICT",
    `ConfigMap ${ref.namespace}/${ref.name} (--output ${uri}) exists and was not written by aicr (no label ${LABEL.name}=${LABEL_VALUE.app}): nothing was deployed`,
    {
      remedy: "choose another name for --output, or remove that ConfigMap if it is no longer needed",
      context: { field: "--output" },
    },
  );
}

/** The report ConfigMap as applied (pure). */
export function buildReportConfigMap(ref: ConfigMapRef, json: string, runId: string) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: ref.name,
      namespace: ref.namespace,
      labels: {
        [LABEL.name]: LABEL_VALUE.app,
        [LABEL.component]: REPORT_COMPONENT,
        [LABEL.managedBy]: LABEL_VALUE.app,
      },
      annotations: { [RUN_ID_ANNOTATION]: runId },
    },
    data: { [REPORT_CONFIGMAP_KEY]: json },
  };
}

/** Applies the report (idempotent, so a dropped answer or a throttle is retried). */
export async function writeReportConfigMap(
  client: KubeClient,
  ref: ConfigMapRef,
  json: string,
  io: { runId: string; log: Logger; signal: AbortSignal },
): Promise<void> {
  // The run's namespace exists once anything was deployed; a run that deployed nothing (readiness
  // failed, every check withheld) ensures it here.
  await ensureNamespace(client, { namespace: ref.namespace, log: io.log, signal: io.signal });
  const cm = buildReportConfigMap(ref, json, io.runId);
  await retry(() => client.apply(cm, { fieldManager: "aicr", force: true }), {
    attempts: 4,
    retryable: isTransient,
    backoffMs: (attempt) => Math.min(250 * 2 ** (attempt - 1), 4000),
    signal: io.signal,
  });
}

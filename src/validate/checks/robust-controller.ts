/**
 * robust-controller (CNCF robust_controller): a CRD-based AI operator runs, its validating webhook has
 * endpoints, and it actively rejects an invalid custom resource. The recipe's components choose the
 * operator: dynamo-platform (Dynamo; it wins when both are named), else kubeflow-trainer (Trainer), else
 * the check skips. The invalid resource is created in the check's own namespace, named with the run ID;
 * should the operator accept it, it is deleted again at once (UID-pinned) and the check fails.
 */
import type { KubeClient } from "../../kube/client.ts";
import { KubeStatusError } from "../../kube/errors.ts";
import { componentNames } from "./_metrics.ts";
import { errorText } from "./_read-outcome.ts";
import {
  crdExists,
  deleteQuietly,
  deploymentAvailable,
  deploymentRef,
  getOptional,
  type WorkloadStatus,
} from "./_support.ts";
import { type CheckContext, type CheckRun, failed, passed, skipped, type Verdict } from "./context.ts";

export interface OperatorSpec {
  key: "dynamo" | "trainer";
  label: string;
  component: string;
  namespace: string;
  deployment: string;
  /** The ValidatingWebhookConfiguration: the first whose name contains this (Dynamo), or this exact name. */
  webhook: { contains: string } | { exact: string };
  crd: string;
  apiVersion: string;
  kind: string;
  /** What the invalid resource has in spec, and why it is invalid. */
  invalidSpec: Record<string, unknown>;
  invalidBecause: string;
  /** The refusal must name an admission webhook (Trainer), not just be a 403/422 (Dynamo). */
  requireWebhookText: boolean;
}

export const DYNAMO: OperatorSpec = {
  key: "dynamo",
  label: "Dynamo",
  component: "dynamo-platform",
  namespace: "dynamo-system",
  deployment: "dynamo-platform-dynamo-operator-controller-manager",
  webhook: { contains: "dynamo" },
  crd: "dynamographdeployments.nvidia.com",
  apiVersion: "nvidia.com/v1alpha1",
  kind: "DynamoGraphDeployment",
  invalidSpec: { services: {} },
  invalidBecause: "spec.services is empty",
  requireWebhookText: false,
};

export const NONEXISTENT_RUNTIME = "robust-test-nonexistent-runtime";
export const TRAINER: OperatorSpec = {
  key: "trainer",
  label: "Kubeflow Trainer",
  component: "kubeflow-trainer",
  namespace: "kubeflow",
  deployment: "kubeflow-trainer-controller-manager",
  webhook: { exact: "validator.trainer.kubeflow.org" },
  crd: "trainjobs.trainer.kubeflow.org",
  apiVersion: "trainer.kubeflow.org/v1alpha1",
  kind: "TrainJob",
  invalidSpec: {
    runtimeRef: {
      name: NONEXISTENT_RUNTIME,
      apiGroup: "trainer.kubeflow.org",
      kind: "ClusterTrainingRuntime",
    },
  },
  invalidBecause: `spec.runtimeRef names ClusterTrainingRuntime ${NONEXISTENT_RUNTIME}, which does not exist`,
  requireWebhookText: true,
};

export const DYNAMO_WORKLOAD_NS = "dynamo-workload";

/** Which operator the recipe names (pure): Dynamo wins when both are there; neither → undefined. */
export function routeOperator(componentRefs: unknown): OperatorSpec | undefined {
  const names = componentNames(componentRefs);
  if (names.includes(DYNAMO.component)) return DYNAMO;
  if (names.includes(TRAINER.component)) return TRAINER;
  return undefined;
}

interface WebhookConfig {
  metadata?: { name?: string };
  webhooks?: { name?: string; clientConfig?: { service?: { namespace?: string; name?: string } } }[];
}

/** The operator's ValidatingWebhookConfiguration among all (pure). */
export const pickWebhookConfig = (
  spec: OperatorSpec,
  all: readonly WebhookConfig[],
): WebhookConfig | undefined =>
  all.find((c) => {
    const name = c.metadata?.name ?? "";
    return "exact" in spec.webhook ? name === spec.webhook.exact : name.includes(spec.webhook.contains);
  });

/** What creating the invalid resource came to. */
export type Rejection =
  | { kind: "accepted"; deleted: boolean }
  | { kind: "refused"; httpStatus: number; reason: string; message: string }
  | { kind: "error"; message: string };

/** The verdict of the rejection test (pure), the operator's earlier checks having passed. */
export function rejectionVerdict(spec: OperatorSpec, r: Rejection, context: string): Verdict {
  const what = `an invalid ${spec.kind} (${spec.invalidBecause})`;
  if (r.kind === "accepted")
    return failed(
      `the API server accepted ${what}: ${spec.label}'s validating webhook did not reject it${r.deleted ? " (deleted again)" : ""}`,
    );
  if (r.kind === "error")
    return failed(`creating ${what} failed for another reason than a rejection: ${r.message}`);
  if (r.httpStatus !== 403 && r.httpStatus !== 422)
    return failed(
      `creating ${what} was answered HTTP ${r.httpStatus} (${r.reason}), not a rejection (403 or 422): ${r.message}`,
    );
  if (r.message.includes("cannot create resource"))
    return failed(
      `the check's identity may not create ${spec.kind} resources (RBAC), so the webhook was never asked: ${r.message}`,
    );
  if (spec.requireWebhookText && !r.message.includes("admission webhook"))
    return failed(
      `${what} was refused (HTTP ${r.httpStatus}), but not by an admission webhook: ${r.message}`,
    );
  return passed(`${context}; it rejected ${what} with HTTP ${r.httpStatus}: ${r.message}`);
}

export function rejectionEvidence(spec: OperatorSpec, name: string, namespace: string, r: Rejection): string {
  const head = `Resource: ${spec.apiVersion} ${spec.kind} ${namespace}/${name} (${spec.invalidBecause})`;
  if (r.kind === "accepted")
    return `${head}\nResult: ACCEPTED (the webhook did not reject it)${r.deleted ? "; deleted" : ""}`;
  if (r.kind === "error") return `${head}\nResult: ERROR\nMessage: ${r.message}`;
  return `${head}\nResult: REJECTED\nHTTP status: ${r.httpStatus}\nReason: ${r.reason}\nMessage: ${r.message}`;
}

interface EndpointSliceLike {
  metadata?: { name?: string };
  endpoints?: { addresses?: string[] }[];
}

/** Each webhook's Service and its EndpointSlices: a line each, and the first problem. */
async function webhookEndpoints(
  client: KubeClient,
  config: WebhookConfig,
): Promise<{ lines: string[]; problem: string | undefined; endpoints: number }> {
  const lines: string[] = [`ValidatingWebhookConfiguration: ${config.metadata?.name}`];
  let problem: string | undefined;
  let endpoints = 0;
  for (const w of config.webhooks ?? []) {
    const svc = w.clientConfig?.service;
    if (!svc?.name || !svc.namespace) {
      lines.push(`webhook ${w.name}: no service (URL client config)`);
      continue;
    }
    try {
      const slices = (
        await client.list<EndpointSliceLike>("discovery.k8s.io/v1", "EndpointSlice", {
          namespace: svc.namespace,
          labelSelector: `kubernetes.io/service-name=${svc.name}`,
        })
      ).items;
      const count = slices.reduce((n, s) => n + (s.endpoints ?? []).length, 0);
      endpoints += count;
      lines.push(
        `webhook ${w.name}: Service ${svc.namespace}/${svc.name}, ${slices.length} EndpointSlice(s), ${count} endpoint(s)`,
      );
      if (slices.length === 0)
        problem ??= `webhook ${w.name}'s Service ${svc.namespace}/${svc.name} has no EndpointSlice: the webhook cannot be reached`;
    } catch (err) {
      lines.push(
        `webhook ${w.name}: Service ${svc.namespace}/${svc.name}, EndpointSlices unreadable: ${errorText(err)}`,
      );
      problem ??= `cannot list the EndpointSlices of webhook ${w.name}'s Service ${svc.namespace}/${svc.name}: ${errorText(err)}`;
    }
  }
  return { lines, problem, endpoints };
}

const names = (items: readonly { metadata?: { name?: string; namespace?: string } }[]) =>
  items
    .map((i) =>
      i.metadata?.namespace ? `${i.metadata.namespace}/${i.metadata.name}` : `${i.metadata?.name}`,
    )
    .join("\n") || "(none)";

async function listEvidence(
  read: () => Promise<{ items: { metadata?: { name?: string; namespace?: string } }[] }>,
) {
  try {
    return names((await read()).items);
  } catch (err) {
    return `cannot list: ${errorText(err)}`;
  }
}

/** Creates the invalid resource in the check's namespace; deletes it again if it was accepted. */
async function tryInvalid(ctx: CheckContext, spec: OperatorSpec, name: string): Promise<Rejection> {
  try {
    const made = await ctx.client.create<{
      apiVersion: string;
      kind: string;
      metadata: { name: string; namespace: string; uid?: string; labels: Record<string, string> };
      spec: unknown;
    }>({
      apiVersion: spec.apiVersion,
      kind: spec.kind,
      metadata: { name, namespace: ctx.testNamespace, labels: { ...ctx.labels } },
      spec: spec.invalidSpec,
    });
    await deleteQuietly(
      ctx.client,
      { apiVersion: spec.apiVersion, kind: spec.kind, namespace: ctx.testNamespace, name },
      made.metadata?.uid,
    );
    return { kind: "accepted", deleted: true };
  } catch (err) {
    if (err instanceof KubeStatusError)
      return {
        kind: "refused",
        httpStatus: err.httpStatus,
        reason: err.status.reason,
        message: err.status.message,
      };
    return { kind: "error", message: errorText(err) };
  }
}

export async function checkOperator(ctx: CheckContext, spec: OperatorSpec): Promise<Verdict> {
  const { client } = ctx;
  const ref = deploymentRef(spec.namespace, spec.deployment);
  let deployment: WorkloadStatus | undefined;
  try {
    deployment = await getOptional<WorkloadStatus>(client, ref);
  } catch (err) {
    return failed(`cannot read Deployment ${spec.namespace}/${spec.deployment}: ${errorText(err)}`);
  }
  ctx.evidence(
    "Operator Deployment",
    deployment
      ? `Deployment ${spec.namespace}/${spec.deployment}: ${deployment.status?.availableReplicas ?? 0}/${deployment.spec?.replicas ?? 1} available`
      : `Deployment ${spec.namespace}/${spec.deployment}: not found`,
    `kubectl -n ${spec.namespace} get deployment ${spec.deployment}`,
  );
  ctx.evidence(
    "Operator pods",
    await listEvidence(() => client.list("v1", "Pod", { namespace: spec.namespace })),
    `kubectl -n ${spec.namespace} get pods`,
  );
  if (!deployment)
    return failed(
      `the ${spec.label} operator is not installed: Deployment ${spec.namespace}/${spec.deployment} not found`,
    );
  if (!deploymentAvailable(deployment))
    return failed(
      `the ${spec.label} operator is not available: Deployment ${spec.namespace}/${spec.deployment} has ${deployment.status?.availableReplicas ?? 0} available replica(s)`,
    );

  let configs: WebhookConfig[];
  try {
    configs = (
      await client.list<WebhookConfig>("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")
    ).items;
  } catch (err) {
    return failed(`cannot list ValidatingWebhookConfigurations: ${errorText(err)}`);
  }
  ctx.evidence("Validating webhooks", names(configs), "kubectl get validatingwebhookconfigurations");
  const config = pickWebhookConfig(spec, configs);
  const wanted =
    "exact" in spec.webhook
      ? `named ${spec.webhook.exact}`
      : `whose name contains "${spec.webhook.contains}"`;
  if (!config)
    return failed(
      `no ValidatingWebhookConfiguration ${wanted}: the ${spec.label} operator validates nothing`,
    );
  const reach = await webhookEndpoints(client, config);
  ctx.evidence(
    "Validating Webhook",
    reach.lines.join("\n"),
    `kubectl get validatingwebhookconfiguration ${config.metadata?.name} -o yaml`,
  );
  if (reach.problem) return failed(reach.problem);

  let crd: boolean;
  try {
    crd = await crdExists(client, spec.crd);
  } catch (err) {
    return failed(`cannot read CRD ${spec.crd}: ${errorText(err)}`);
  }
  ctx.evidence(
    "Operator CRDs",
    `${spec.crd}: ${crd ? "present" : "NOT FOUND"}`,
    `kubectl get crd ${spec.crd}`,
  );
  if (!crd) return failed(`CRD ${spec.crd} not found: the ${spec.label} operator's API is not installed`);

  const name = ctx.name("robust-test");
  const rejection = await tryInvalid(ctx, spec, name);
  ctx.evidence(
    "Webhook Rejection Test",
    rejectionEvidence(spec, name, ctx.testNamespace, rejection),
    `kubectl -n ${ctx.testNamespace} create -f <an invalid ${spec.kind}>`,
  );
  if (spec.key === "dynamo") {
    ctx.evidence(
      "DynamoGraphDeployments",
      await listEvidence(() => client.list("nvidia.com/v1alpha1", "DynamoGraphDeployment")),
      "kubectl get dynamographdeployments -A",
    );
    ctx.evidence(
      "Dynamo workload pods",
      await listEvidence(() => client.list("v1", "Pod", { namespace: DYNAMO_WORKLOAD_NS })),
      `kubectl -n ${DYNAMO_WORKLOAD_NS} get pods`,
    );
    ctx.evidence(
      "DynamoComponentDeployments",
      await listEvidence(() =>
        client.list("nvidia.com/v1alpha1", "DynamoComponentDeployment", { namespace: DYNAMO_WORKLOAD_NS }),
      ),
      `kubectl -n ${DYNAMO_WORKLOAD_NS} get dynamocomponentdeployments`,
    );
  }
  return rejectionVerdict(
    spec,
    rejection,
    `the ${spec.label} operator runs, its webhook ${config.metadata?.name} has ${reach.endpoints} endpoint(s)`,
  );
}

export const run: CheckRun = async (ctx) => {
  const spec = routeOperator(ctx.recipe?.spec.componentRefs);
  if (!spec)
    return skipped(
      `the recipe names neither ${DYNAMO.component} nor ${TRAINER.component}: no CRD-based AI operator to test`,
    );
  return checkOperator(ctx, spec);
};

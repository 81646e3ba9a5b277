/**
 * CRD-based AI operator stand-ins for robust-controller, on a real test cluster: the Dynamo platform
 * (dynamo-system) or Kubeflow Trainer (kubeflow) — the operator's Deployment (available), its CRDs, and
 * a ValidatingWebhookConfiguration whose Service (selector-less, an EndpointSlice and Endpoints at this
 * host's address) leads to an HTTPS admission webhook served from the test process. The apiserver
 * calls it for real (--enable-aggregator-routing: at the endpoint address) and wraps its denial as
 * `admission webhook "<name>" denied the request: <message>`.
 *
 *   const op = await installOperator(cluster, { operator: "dynamo" });   // denies the invalid resource
 *   op.webhook = "allow";                                                // broken: allows everything
 *   await installOperator(cluster, { operator: "trainer", webhook: "no-endpoints" });
 *   op.reviews                                                           // AdmissionReviews answered
 *   await op.stop();
 *
 * Deny rules: a DynamoGraphDeployment whose spec.services is empty or absent; a TrainJob whose
 * spec.runtimeRef names a runtime that does not exist (none does here).
 */
import { until } from "../../support/until.ts";
import { looseCrd } from "../real/crds.ts";
import type { TestCluster } from "../testbed.ts";
import { adminClient, ensure, exposeOnHost, hostAddress, selfSignedServing } from "./_host.ts";
import { standinApi, standinDeployment } from "./_standin-api.ts";

export type WebhookMode = "deny" | "allow" | "no-endpoints";

interface OperatorFacts {
  namespace: string;
  deployment: string;
  image: string;
  group: string;
  crds: { plural: string; kind: string }[];
  webhookConfig: string;
  webhookName: string;
  service: string;
  path: string;
  resource: string;
  /** An object the webhook denies (the readiness probe's, sent as a dry run). */
  invalid: Record<string, unknown>;
  deny: (object: { spec?: Record<string, unknown> }) => string | undefined;
}

const OPERATORS: Record<"dynamo" | "trainer", OperatorFacts> = {
  dynamo: {
    namespace: "dynamo-system",
    deployment: "dynamo-platform-dynamo-operator-controller-manager",
    image: "nvcr.io/nvidia/ai-dynamo/kubernetes-operator:0.4.1",
    group: "nvidia.com",
    crds: [
      { plural: "dynamographdeployments", kind: "DynamoGraphDeployment" },
      { plural: "dynamocomponentdeployments", kind: "DynamoComponentDeployment" },
    ],
    webhookConfig: "dynamo-platform-dynamo-operator-validating-webhook-configuration",
    webhookName: "vdynamographdeployment.kb.io",
    service: "dynamo-platform-dynamo-operator-webhook-service",
    path: "/validate-nvidia-com-v1alpha1-dynamographdeployment",
    resource: "dynamographdeployments",
    invalid: { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoGraphDeployment", spec: { services: {} } },
    deny: (o) => {
      const services = o.spec?.services;
      const empty = !services || typeof services !== "object" || Object.keys(services).length === 0;
      return empty ? "spec.services must define at least one service" : undefined;
    },
  },
  trainer: {
    namespace: "kubeflow",
    deployment: "kubeflow-trainer-controller-manager",
    image: "ghcr.io/kubeflow/trainer/trainer-controller-manager:v2.1.0",
    group: "trainer.kubeflow.org",
    crds: [{ plural: "trainjobs", kind: "TrainJob" }],
    webhookConfig: "validator.trainer.kubeflow.org",
    webhookName: "validator.trainjob.trainer.kubeflow.org",
    service: "kubeflow-trainer-controller-manager",
    path: "/validate-trainer-kubeflow-org-v1alpha1-trainjob",
    resource: "trainjobs",
    invalid: {
      apiVersion: "trainer.kubeflow.org/v1alpha1",
      kind: "TrainJob",
      spec: {
        runtimeRef: {
          name: "standin-probe",
          apiGroup: "trainer.kubeflow.org",
          kind: "ClusterTrainingRuntime",
        },
      },
    },
    deny: (o) => {
      const ref = o.spec?.runtimeRef as { name?: string; kind?: string } | undefined;
      return `${ref?.kind ?? "ClusterTrainingRuntime"}.trainer.kubeflow.org "${ref?.name ?? ""}" not found: specified clusterTrainingRuntime must be created before the TrainJob is created`;
    },
  },
};

export interface OperatorOptions {
  operator: "dynamo" | "trainer";
  /** Default "deny". */
  webhook?: WebhookMode;
}

export interface OperatorStandin {
  /** "deny" or "allow" (what the webhook answers from now on). */
  webhook: WebhookMode;
  /** AdmissionReviews answered: the kind and name of each object, and whether it was allowed. */
  readonly reviews: { kind: string; name: string; allowed: boolean }[];
  stop(): Promise<void>;
}

/** Installs the operator's stand-in (CRDs, Deployment, webhook) and starts its webhook server. */
export async function installOperator(cluster: TestCluster, o: OperatorOptions): Promise<OperatorStandin> {
  const facts = OPERATORS[o.operator];
  const state = { webhook: o.webhook ?? ("deny" as WebhookMode) };
  const reviews: OperatorStandin["reviews"] = [];
  const tls = selfSignedServing([`${facts.service}.${facts.namespace}.svc`]);
  const server = Bun.serve({
    hostname: hostAddress(),
    port: 0,
    tls,
    async fetch(req) {
      if (req.method !== "POST" || new URL(req.url).pathname !== facts.path)
        return new Response("not found\n", { status: 404 });
      const review = (await req.json()) as {
        apiVersion?: string;
        request?: {
          uid?: string;
          kind?: { kind?: string };
          name?: string;
          object?: { metadata?: { name?: string }; spec?: Record<string, unknown> };
        };
      };
      const object = review.request?.object ?? {};
      const reason = state.webhook === "allow" ? undefined : facts.deny(object);
      reviews.push({
        kind: review.request?.kind?.kind ?? "",
        name: object.metadata?.name ?? review.request?.name ?? "",
        allowed: reason === undefined,
      });
      return Response.json({
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        response: {
          uid: review.request?.uid ?? "",
          allowed: reason === undefined,
          ...(reason ? { status: { code: 403, reason: "Forbidden", message: reason } } : {}),
        },
      });
    },
  });
  const client = adminClient(cluster);
  try {
    const api = standinApi(cluster);
    for (const c of facts.crds)
      await api.installCrd(looseCrd({ group: facts.group, version: "v1alpha1", ...c, scope: "Namespaced" }));
    await standinDeployment(client, {
      namespace: facts.namespace,
      name: facts.deployment,
      labels: { "app.kubernetes.io/name": facts.deployment, "control-plane": "controller-manager" },
      image: facts.image,
    });
    await exposeOnHost(
      client,
      { namespace: facts.namespace, name: facts.service, port: 443, portName: "webhook-server" },
      server.port as number,
      { endpoints: state.webhook !== "no-endpoints" },
    );
    await ensure(client, {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: facts.webhookConfig },
      webhooks: [
        {
          name: facts.webhookName,
          clientConfig: {
            service: { namespace: facts.namespace, name: facts.service, path: facts.path, port: 443 },
            caBundle: Buffer.from(tls.cert).toString("base64"),
          },
          rules: [
            {
              operations: ["CREATE", "UPDATE"],
              apiGroups: [facts.group],
              apiVersions: ["v1alpha1"],
              resources: [facts.resource],
            },
          ],
          admissionReviewVersions: ["v1"],
          sideEffects: "None",
          failurePolicy: "Fail",
          timeoutSeconds: 10,
        },
      ],
    });
    // The apiserver calls a new webhook a moment after its configuration is stored: wait until a dry
    // run of an invalid object is denied through it.
    if (state.webhook === "deny")
      await until(
        async () => {
          try {
            await client.create(
              { ...facts.invalid, metadata: { name: "standin-probe", namespace: "default" } } as never,
              { dryRun: true },
            );
            return false;
          } catch (err) {
            return (err as Error).message.includes("admission webhook");
          }
        },
        `the ${o.operator} webhook denying through the apiserver`,
        { ms: 30_000, everyMs: 100 },
      );
    reviews.length = 0;
  } catch (err) {
    client.close();
    await server.stop(true);
    throw err;
  }
  return {
    get webhook() {
      return state.webhook;
    },
    set webhook(m: WebhookMode) {
      state.webhook = m;
    },
    reviews,
    async stop() {
      await client
        .delete({
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "ValidatingWebhookConfiguration",
          name: facts.webhookConfig,
        })
        .catch(() => {});
      client.close();
      await server.stop(true);
    },
  };
}

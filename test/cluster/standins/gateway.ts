/**
 * A kgateway stand-in for inference-gateway, on the real backend: the Gateway API CRDs (gatewayclasses,
 * gateways, httproutes in gateway.networking.k8s.io/v1) and the Inference Extension's inferencepools
 * (inference.networking.x-k8s.io), GatewayClass kgateway with an Accepted condition, Gateway
 * kgateway-system/inference-gateway with a Programmed condition and one `http` listener, an HTTPRoute
 * attached to it, the controller's and the proxy's Deployments (pods the process kubelet runs), and the
 * proxy's Service inference-gateway with an EndpointSlice (labelled kubernetes.io/service-name) whose
 * endpoint is this host's address.
 *
 *   const gw = await installKgatewayStandin(cluster);        // healthy
 *   await gw.set({ gateway: "notProgrammed" });               // a broken variant, settled
 *   await gw.set({ endpoint: "notReady" });
 *
 * Start the cluster with standinClusterOptions() (_cluster.ts).
 */
import { until } from "../../support/until.ts";
import { looseCrd } from "../real/crds.ts";
import type { TestCluster } from "../testbed.ts";
import { hostAddress } from "./_host.ts";
import { apiPath, deploymentObject, type StandinApi, standinApi, untilWorkload } from "./_standin-api.ts";

export const KGATEWAY_NS = "kgateway-system";
export const GATEWAY_CLASS = "kgateway";
export const GATEWAY = "inference-gateway";
const GW = "gateway.networking.k8s.io/v1";

/** The API review the Gateway API CRDs name (a *.k8s.io group must name one). */
const GATEWAY_API_REVIEW = "https://github.com/kubernetes-sigs/gateway-api/pull/3328";

export const GATEWAY_CRDS = [
  looseCrd({
    group: "gateway.networking.k8s.io",
    version: "v1",
    plural: "gatewayclasses",
    kind: "GatewayClass",
    scope: "Cluster",
    approved: GATEWAY_API_REVIEW,
  }),
  looseCrd({
    group: "gateway.networking.k8s.io",
    version: "v1",
    plural: "gateways",
    kind: "Gateway",
    scope: "Namespaced",
    approved: GATEWAY_API_REVIEW,
  }),
  looseCrd({
    group: "gateway.networking.k8s.io",
    version: "v1",
    plural: "httproutes",
    kind: "HTTPRoute",
    scope: "Namespaced",
    approved: GATEWAY_API_REVIEW,
  }),
  looseCrd({
    group: "inference.networking.x-k8s.io",
    version: "v1alpha2",
    plural: "inferencepools",
    kind: "InferencePool",
    scope: "Namespaced",
  }),
];

export interface KgatewayStandinOptions {
  /** GatewayClass kgateway: Accepted=True (default), Accepted=False, or absent. */
  gatewayClass?: "accepted" | "notAccepted" | "absent";
  /** Gateway inference-gateway: Programmed=True (default), Programmed=False, or absent. */
  gateway?: "programmed" | "notProgrammed" | "absent";
  /** The proxy's EndpointSlice: one ready endpoint (default), one not ready, or none at all. */
  endpoint?: "ready" | "notReady" | "absent";
}

export interface KgatewayStandin {
  /** Switches the given parts to another variant and resolves once the apiserver holds it. */
  set(options: KgatewayStandinOptions): Promise<void>;
}

const now = () => `${new Date().toISOString().slice(0, 19)}Z`;
const condition = (type: string, ok: boolean, reason: string, message: string, generation = 1) => ({
  type,
  status: ok ? "True" : "False",
  reason,
  message,
  observedGeneration: generation,
  lastTransitionTime: now(),
});

export async function installKgatewayStandin(
  cluster: TestCluster,
  options: KgatewayStandinOptions = {},
): Promise<KgatewayStandin> {
  const api = standinApi(cluster);
  for (const crd of GATEWAY_CRDS) await api.installCrd(crd);
  await api.ensureNamespace(KGATEWAY_NS);
  const labels = (name: string) => ({
    "app.kubernetes.io/name": name,
    "app.kubernetes.io/instance": "kgateway",
  });
  await Promise.all(
    [
      { name: "kgateway", image: "cr.kgateway.dev/kgateway-dev/kgateway:v2.0.4" },
      { name: GATEWAY, image: "cr.kgateway.dev/kgateway-dev/envoy-wrapper:v2.0.4" },
    ].map(async (d) => {
      await api.put(
        apiPath("apps/v1", "deployments", KGATEWAY_NS),
        deploymentObject({ namespace: KGATEWAY_NS, name: d.name, labels: labels(d.name), image: d.image }),
      );
      await untilWorkload(api, apiPath("apps/v1", "deployments", KGATEWAY_NS, d.name), "ready");
    }),
  );
  await api.put(apiPath("v1", "services", KGATEWAY_NS), {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: GATEWAY, namespace: KGATEWAY_NS, labels: labels(GATEWAY) },
    spec: { ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }] },
  });
  await api.put(apiPath(GW, "httproutes", KGATEWAY_NS), {
    apiVersion: GW,
    kind: "HTTPRoute",
    metadata: { name: "inference-route", namespace: KGATEWAY_NS },
    spec: { parentRefs: [{ name: GATEWAY }], rules: [{ backendRefs: [{ name: "vllm", port: 8000 }] }] },
  });
  const standin: KgatewayStandin = {
    async set(o) {
      if (o.gatewayClass) await setGatewayClass(api, o.gatewayClass);
      if (o.gateway) await setGateway(api, o.gateway);
      if (o.endpoint) await setEndpoint(api, o.endpoint);
    },
  };
  await standin.set({
    gatewayClass: options.gatewayClass ?? "accepted",
    gateway: options.gateway ?? "programmed",
    endpoint: options.endpoint ?? "ready",
  });
  return standin;
}

async function removed(api: StandinApi, path: string) {
  await api.remove(path);
  await until(async () => !(await api.get(path)), `${path} gone`);
}

async function setGatewayClass(api: StandinApi, mode: NonNullable<KgatewayStandinOptions["gatewayClass"]>) {
  const path = apiPath(GW, "gatewayclasses", undefined, GATEWAY_CLASS);
  if (mode === "absent") return removed(api, path);
  await api.put(apiPath(GW, "gatewayclasses"), {
    apiVersion: GW,
    kind: "GatewayClass",
    metadata: { name: GATEWAY_CLASS },
    spec: { controllerName: "kgateway.dev/kgateway" },
  });
  await api.setStatus(path, {
    conditions: [
      mode === "accepted"
        ? condition("Accepted", true, "Accepted", "GatewayClass accepted by kgateway")
        : condition("Accepted", false, "InvalidParameters", "parametersRef not found"),
    ],
  });
}

async function setGateway(api: StandinApi, mode: NonNullable<KgatewayStandinOptions["gateway"]>) {
  const path = apiPath(GW, "gateways", KGATEWAY_NS, GATEWAY);
  if (mode === "absent") return removed(api, path);
  await api.put(apiPath(GW, "gateways", KGATEWAY_NS), {
    apiVersion: GW,
    kind: "Gateway",
    metadata: { name: GATEWAY, namespace: KGATEWAY_NS },
    spec: { gatewayClassName: GATEWAY_CLASS, listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
  });
  const programmed = mode === "programmed";
  await api.setStatus(path, {
    ...(programmed ? { addresses: [{ type: "IPAddress", value: hostAddress() }] } : {}),
    conditions: [
      condition("Accepted", true, "Accepted", "Gateway accepted"),
      programmed
        ? condition("Programmed", true, "Programmed", "Gateway programmed")
        : condition("Programmed", false, "AddressNotAssigned", "no address assigned to the Gateway's proxy"),
    ],
    listeners: [
      {
        name: "http",
        attachedRoutes: 1,
        supportedKinds: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute" }],
        conditions: [condition("Programmed", programmed, programmed ? "Programmed" : "Pending", "listener")],
      },
    ],
  });
}

const SLICE = `${GATEWAY}-standin`;

async function setEndpoint(api: StandinApi, mode: NonNullable<KgatewayStandinOptions["endpoint"]>) {
  const path = apiPath("discovery.k8s.io/v1", "endpointslices", KGATEWAY_NS, SLICE);
  if (mode === "absent") return removed(api, path);
  const ready = mode === "ready";
  await api.put(apiPath("discovery.k8s.io/v1", "endpointslices", KGATEWAY_NS), {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: SLICE,
      namespace: KGATEWAY_NS,
      labels: {
        "kubernetes.io/service-name": GATEWAY,
        "endpointslice.kubernetes.io/managed-by": "standin.aicr.test",
      },
    },
    addressType: "IPv4",
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
    endpoints: [{ addresses: [hostAddress()], conditions: { ready, serving: ready, terminating: false } }],
  });
}

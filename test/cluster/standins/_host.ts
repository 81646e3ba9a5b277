/**
 * What the stand-ins of a GPU cluster's services share: servers in the test process reached by the real
 * apiserver (aggregated APIs, admission webhooks) or by a check (Prometheus) at this host's
 * non-loopback address — the apiserver refuses loopback endpoint addresses — behind a selector-less
 * Service with an EndpointSlice and a legacy Endpoints object written here; a self-signed serving
 * certificate; the admin's client and its create-if-absent; a pod runtime that keeps every stand-in
 * workload running.
 */
import { networkInterfaces } from "node:os";
import { KubeClient, type KubeObject } from "../../../src/kube/client.ts";
import { isAlreadyExists } from "../../../src/kube/errors.ts";
import { selfSigned } from "../certs.ts";
import type { RunContext, RunResult } from "../controllers/runtime.ts";
import type { TestCluster } from "../testbed.ts";

/** This host's first non-internal IPv4 address (what the apiserver may dial as an endpoint). */
export function hostAddress(): string {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  throw new Error("no non-loopback IPv4 address on this host: the apiserver cannot reach a stand-in server");
}

/** The admin's client of a test cluster (one per stand-in; closed by its stop). */
export const adminClient = (cluster: TestCluster): KubeClient =>
  KubeClient.connect({ kubeconfig: cluster.kubeconfigFor("admin"), env: {} });

/** Creates an object; one that exists already is left as it is. */
export async function ensure(client: KubeClient, object: KubeObject): Promise<void> {
  try {
    await client.create(object);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

/** Creates the Namespace unless it exists. */
export const ensureNamespace = (client: KubeClient, name: string) =>
  ensure(client, { apiVersion: "v1", kind: "Namespace", metadata: { name } });

export interface HostService {
  namespace: string;
  name: string;
  /** The Service's port (the endpoint's port is the server's). */
  port: number;
  portName: string;
  labels?: Record<string, string>;
}

/**
 * A Service without selector whose one endpoint is `address`:`targetPort` (default this host's
 * address): the Service, its EndpointSlice (managed by this test, so the EndpointSlice controller leaves
 * it alone) and the legacy Endpoints object. `address: undefined` with `ready: false` makes an endpoint
 * that exists but is not ready.
 */
export async function exposeOnHost(
  client: KubeClient,
  svc: HostService,
  targetPort: number,
  o: { address?: string; ready?: boolean; endpoints?: boolean } = {},
): Promise<void> {
  const address = o.address ?? hostAddress();
  const ready = o.ready ?? true;
  await ensureNamespace(client, svc.namespace);
  await ensure(client, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: svc.name, namespace: svc.namespace, labels: svc.labels ?? {} },
    spec: { ports: [{ name: svc.portName, port: svc.port, targetPort, protocol: "TCP" }] },
  });
  if (o.endpoints === false) return;
  await ensure(client, {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: `${svc.name}-host`,
      namespace: svc.namespace,
      labels: {
        "kubernetes.io/service-name": svc.name,
        "endpointslice.kubernetes.io/managed-by": "standins.aicr.test",
      },
    },
    addressType: "IPv4",
    ports: [{ name: svc.portName, port: targetPort, protocol: "TCP" }],
    endpoints: [{ addresses: [address], conditions: { ready, serving: ready, terminating: false } }],
  });
  await ensure(client, {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name: svc.name, namespace: svc.namespace },
    subsets: [
      {
        ...(ready ? { addresses: [{ ip: address }] } : { notReadyAddresses: [{ ip: address }] }),
        ports: [{ name: svc.portName, port: targetPort, protocol: "TCP" }],
      },
    ],
  });
}

/** Deletes what exposeOnHost made (the Service, its EndpointSlice and Endpoints); gone ones are fine. */
export async function unexposeOnHost(
  client: KubeClient,
  svc: { namespace: string; name: string },
): Promise<void> {
  for (const ref of [
    { apiVersion: "v1", kind: "Service", ...svc },
    { apiVersion: "v1", kind: "Endpoints", ...svc },
    { apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice", ...svc, name: `${svc.name}-host` },
  ])
    await client.delete(ref).catch(() => {});
}

/**
 * A self-signed serving certificate (P-256) for `dnsNames` and this host's address: its PEM is also
 * the caBundle a webhook configuration or an APIService names.
 */
export const selfSignedServing = (dnsNames: string[]): { cert: string; key: string } =>
  selfSigned("aicr-standin", [...dnsNames.map((d) => `DNS:${d}`), `IP:${hostAddress()}`]);

/**
 * The pod runtime of a stand-in workload (an operator's or exporter's container, whose image has no
 * executable here): it runs until its pod is deleted or the kubelet stops, as a long-running server does.
 */
export function runUntilStopped(ctx: RunContext): Promise<RunResult> {
  return new Promise((resolve) => {
    if (ctx.signal.aborted) return resolve({ exitCode: 0 });
    ctx.signal.addEventListener("abort", () => resolve({ exitCode: 143 }), { once: true });
  });
}

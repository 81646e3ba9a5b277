/**
 * The real backend of testbed.ts: a control plane built from Kubernetes' modules, a fault proxy in
 * front of it (clients' URL; the request log and faults live there), an informer-style mirror as
 * `store`, and our process kubelet for the nodes. One control plane per cluster: it is ready in about
 * three seconds, and nothing leaks from one suite into the next.
 */
import { clientCert, pki } from "../certs.ts";
import { asRuntime } from "../controllers/runtime.ts";
import { Faults } from "../faults.ts";
import { writeKubeconfig } from "../kubeconfig.ts";
import type { KObject } from "../objects.ts";
import { RequestLog } from "../request-log.ts";
import { resource } from "../resources.ts";
import type { TestCluster, TestClusterOptions } from "../testbed.ts";
import type { ApiserverAccess } from "../wiring.ts";
import { adminHttp } from "./admin-http.ts";
import { takeControlPlane } from "./control-plane.ts";
import { CLUSTER_POLICY_CRD, installCrd } from "./crds.ts";
import { startFaultProxy } from "./fault-proxy.ts";
import { startRealKubelet } from "./kubelet.ts";
import { MirrorStore } from "./mirror.ts";
import { type RealNodeStack, startRealNodeStack } from "./node/stack.ts";

/** What the mirror keeps: every kind the suites read or count. */
const MIRRORED = [
  "namespaces",
  "nodes",
  "pods",
  "jobs",
  "configmaps",
  "serviceaccounts",
  "roles",
  "rolebindings",
  "clusterroles",
  "clusterrolebindings",
  "events",
  "clusterpolicies",
];

/**
 * The bound on the nodes' becoming Ready and untainted: 60 s, and 120 ms more per node. Every new Node
 * carries the not-ready taint until the node lifecycle controller lifts it, two requests per Node under
 * its client's rate limit (100 QPS, test/control-plane/up): 1,000 nodes took 28 s on an idle 2-core
 * machine (registration 8 s, the taints 20 s), and a loaded one may take several times that.
 */
export const nodesReadyMs = (nodes: number): number => 60_000 + 120 * nodes;

export async function startRealCluster(options: TestClusterOptions): Promise<TestCluster> {
  const cp = await takeControlPlane();
  const stops: (() => Promise<unknown>)[] = [() => cp.stop()];
  const stopAll = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  try {
    const material = pki();
    const admin = clientCert("admin", ["system:masters"]);
    const http = adminHttp(cp.url, { ca: material.caCert, cert: admin.cert, key: admin.key });
    await installCrd(http, CLUSTER_POLICY_CRD);

    const groups = new Map<string, string[]>([["admin", ["system:masters"]]]);
    for (const u of options.users ?? []) groups.set(u.name, u.groups ?? []);
    const log = new RequestLog();
    const faults = new Faults();
    const proxy = await startFaultProxy({
      upstream: cp.url,
      caCert: material.caCert,
      serving: { cert: material.serverCert, key: material.serverKey },
      frontProxy: { cert: cp.frontProxy.cert, key: cp.frontProxy.key },
      faults,
      log,
    });
    stops.push(() => proxy.stop());

    const store = new MirrorStore(http, MIRRORED.map(resource));
    await store.start();
    stops.push(() => store.stop());
    // The controllers' first writes (the default ServiceAccount, kube-root-ca.crt) land a moment after
    // the apiserver is ready: a suite starts on a settled cluster, not while they still arrive.
    await store.until(
      () =>
        store.find(resource("serviceaccounts"), "default", "default") !== undefined &&
        store.find(resource("configmaps"), "default", "kube-root-ca.crt") !== undefined,
      "the default ServiceAccount and kube-root-ca.crt",
    );
    for (const o of options.objects ?? []) await store.create(resource(o.resource), o.object);

    const serviceAccountToken = (ns: string, name: string): string => {
      const res = Bun.spawnSync(
        [cp.kubectl, "--kubeconfig", cp.adminKubeconfig, "-n", ns, "create", "token", name, "--duration=2h"],
        { stdout: "pipe", stderr: "pipe" },
      );
      if (res.exitCode !== 0) throw new Error(`kubectl create token ${ns}/${name}: ${res.stderr.toString()}`);
      return res.stdout.toString().trim();
    };
    const access: ApiserverAccess = {
      url: proxy.url,
      caCert: material.caCert,
      tokenForServiceAccount: serviceAccountToken,
      kubeconfigForServiceAccount: () => {
        throw new Error("the real kubelet lays out the pod's ServiceAccount token; no kubeconfig is written");
      },
    };
    let realNode: RealNodeStack | undefined;
    let addNode: ((node: KObject) => Promise<void>) | undefined;
    if (options.realNode) {
      realNode = await startRealNodeStack(options.realNode, {
        apiserverPort: cp.port,
        servicePort: proxy.port,
      });
      stops.push(() => realNode!.stop());
    }
    if (options.controllers !== false) {
      const kubelet = await startRealKubelet({
        apiserverUrl: cp.url,
        caCert: material.caCert,
        nodes: options.nodes ?? [],
        runtime: asRuntime(options.runtime?.(access)),
        ...(options.unpullableImages ? { unpullableImages: options.unpullableImages } : {}),
        serviceHost: "127.0.0.1",
        servicePort: proxy.port,
      });
      stops.push(() => kubelet.stop());
      addNode = (n) => kubelet.addNode(n);
      const names = [
        ...(options.nodes ?? []).map((n) => n.metadata.name!),
        ...(realNode ? [realNode.node.name] : []),
      ];
      // Ready, and the not-ready taint that TaintNodesByCondition puts on every new Node already
      // lifted by the node lifecycle controller: until then nothing schedules there.
      const usable = (n: string) => {
        const o = store.find(resource("nodes"), undefined, n);
        const ready = (o?.status?.conditions ?? []).some(
          (c: { type: string; status: string }) => c.type === "Ready" && c.status === "True",
        );
        const taints: { key: string }[] = o?.spec?.taints ?? [];
        // The real node's GPUs count once its device plugin has registered them.
        const gpus =
          n !== realNode?.node.name ||
          (options.realNode?.gpus ?? 8) === 0 ||
          Number(o?.status?.allocatable?.["nvidia.com/gpu"] ?? 0) > 0;
        return ready && gpus && !taints.some((t) => t.key.startsWith("node.kubernetes.io/"));
      };
      await store.until(
        () => names.every(usable),
        () => {
          const left = names.filter((n) => !usable(n));
          return `nodes Ready and untainted: ${left.length} of ${names.length} not yet (${left.slice(0, 10).join(", ")}${left.length > 10 ? ", …" : ""})`;
        },
        nodesReadyMs(names.length),
      );
    } else {
      for (const n of options.nodes ?? []) await store.create(resource("nodes"), n);
    }

    let files = 0;
    return {
      backend: "real",
      url: proxy.url,
      port: proxy.port,
      caCert: material.caCert,
      store,
      log,
      faults,
      fake: undefined,
      kubeconfigFor(user, opts = {}) {
        const file = `client-${++files}.kubeconfig`;
        const sa = user.match(/^system:serviceaccount:([^:]+):([^:]+)$/);
        if (sa)
          return writeKubeconfig(
            cp.dir,
            file,
            proxy.url,
            material.caCert,
            user,
            { token: serviceAccountToken(sa[1]!, sa[2]!) },
            opts.namespace,
          );
        const g = groups.get(user);
        if (!g) throw new Error(`unknown user ${user}; add it with addUser()`);
        // Every other identity authenticates with a client certificate: the real apiserver's token
        // file is read once at start, a certificate can be issued at any time.
        return writeKubeconfig(
          cp.dir,
          file,
          proxy.url,
          material.caCert,
          user,
          { cert: clientCert(user, g) },
          opts.namespace,
        );
      },
      addUser(name, g = []) {
        groups.set(name, g);
      },
      connectionsAccepted: () => proxy.connectionsAccepted(),
      kubectl: async () => cp.kubectl,
      realNode,
      addNode,
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

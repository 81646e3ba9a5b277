/**
 * A process kubelet for the real control plane (test/cluster/real/control-plane.ts): it registers Nodes,
 * keeps them Ready with leases and status heartbeats, runs the pods bound to them through the same
 * ContainerRuntime as the fake kubelet (controllers/runtime.ts), reports their status, serves their logs
 * to the apiserver's pods/log proxy, and confirms graceful deletions. Each Node acts with its own client
 * certificate (system:node:<name>), so the Node authorizer and NodeRestriction admission see a kubelet.
 *
 *   const kubelet = await startRealKubelet({ apiserverUrl: cp.url, caCert: cp.caCert,
 *     nodes: [node("gpu-1", { gpus: 8 })], runtime: processRuntime({...}) });
 *   await kubelet.stop();
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ContainerRuntime } from "../controllers/runtime.ts";
import type { KObject } from "../store.ts";
import { NodeApi } from "./kubelet-api.ts";
import { startLogServer } from "./kubelet-logs.ts";
import { NodeAgent } from "./kubelet-node.ts";
import type { PodWorker } from "./kubelet-pod.ts";

export interface RealKubeletOptions {
  /** The real apiserver (direct, not through any proxy). */
  apiserverUrl: string;
  /** PEM of the CA (server verification). */
  caCert: string;
  /** Node objects to register, built by node() in test/cluster/nodes.ts. */
  nodes: KObject[];
  /** The same interface the fake kubelet uses: processRuntime(...) and function runtimes work unchanged. */
  runtime: ContainerRuntime;
  /** These end in ErrImagePull then ImagePullBackOff (waiting reason), never running. */
  unpullableImages?: string[] | ((image: string) => boolean);
  /**
   * What pods see as KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT (a fault proxy in front of the
   * apiserver may be given here so the agent's requests are logged). Default: the apiserver's host/port.
   */
  serviceHost?: string;
  servicePort?: number;
}

export interface RealKubelet {
  /** The HTTPS port of the log server (every Node's daemonEndpoints.kubeletEndpoint.Port). */
  port: number;
  /** Registers one more Node (a cluster autoscaler's new node) and runs its pods from then on. */
  addNode(node: KObject): Promise<void>;
  stop(): Promise<void>;
}

/** Unexpected failures (a status write refused, a watch broken) are printed, not thrown. */
const onError = (what: string, err: unknown) => {
  console.error(`[process-kubelet] ${what}: ${err instanceof Error ? err.message : String(err)}`);
};

export async function startRealKubelet(opts: RealKubeletOptions): Promise<RealKubelet> {
  const url = new URL(opts.apiserverUrl);
  const unpullable = opts.unpullableImages ?? [];
  const isUnpullable = typeof unpullable === "function" ? unpullable : (i: string) => unpullable.includes(i);
  const workDir = mkdtempSync(join(tmpdir(), "aicr-process-kubelet-"));
  /** namespace/name → the worker of the pod holding that name now, for the log server. */
  const byName = new Map<string, PodWorker>();
  const logs = await startLogServer((ns, pod, container) => {
    const w = byName.get(`${ns}/${pod}`);
    return w ? w.logFor(container) : { status: 404, message: `pod "${pod}" does not exist` };
  });
  const agentFor = (n: KObject) => {
    const api = new NodeApi(opts.apiserverUrl.replace(/\/+$/, ""), opts.caCert, n.metadata.name!);
    return new NodeAgent(n, logs.port, byName, {
      api,
      runtime: opts.runtime,
      isUnpullable,
      service: { host: opts.serviceHost ?? url.hostname, port: opts.servicePort ?? Number(url.port || 443) },
      workDir,
      onError,
    });
  };
  const agents = opts.nodes.map(agentFor);
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      await Promise.all(agents.map((a) => a.stop()));
      await logs.close();
      await opts.runtime.close?.();
      rmSync(workDir, { recursive: true, force: true });
    })();
    return stopped;
  };
  try {
    await Promise.all(agents.map((a) => a.register()));
  } catch (err) {
    await stop();
    throw err;
  }
  for (const a of agents) a.start();
  const addNode = async (n: KObject) => {
    if (stopped) throw new Error(`the kubelet has stopped: node ${n.metadata.name} not added`);
    const agent = agentFor(n);
    agents.push(agent);
    await agent.register();
    agent.start();
  };
  return { port: logs.port, addNode, stop };
}

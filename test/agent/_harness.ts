import { join } from "node:path";
import { AgentRun, type AgentRunConfig } from "../../src/agent/deployer.ts";
import { createLogger, type Logger } from "../../src/core/log.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { generateInvocationId } from "../../src/run/run-id.ts";
import { processRuntime } from "../cluster/controllers/process-runtime.ts";
import { node } from "../cluster/nodes.ts";
import { type Cluster, startCluster } from "../cluster/server.ts";
import { AICR, ensureBuilt, ROOT } from "../e2e/_aicr.ts";

/** The agent image; the fake kubelet runs the compiled binary for it. */
export const AGENT_IMAGE = "ghcr.io/nvidia/aicr:test";
export const H100_ROOT = join(ROOT, "test/fixtures/hosts/h100-node");
export const H100_BIN = join(ROOT, "test/fixtures/bin/h100");

/** A cluster with a GPU node whose "container runtime" runs dist/aicr over an 8×H100 fixture host. */
export async function agentCluster(options: { images?: Record<string, string> } = {}): Promise<Cluster> {
  await ensureBuilt();
  return startCluster({
    objects: [
      { resource: "nodes", object: node("gpu-node-1", { gpus: 8 }) },
      { resource: "nodes", object: node("cpu-node-1") },
    ],
    controllers: {
      runtimeFactory: (api: { kubeconfigForServiceAccount(ns: string, name: string): Promise<string> }) =>
        processRuntime({
          images: { [AGENT_IMAGE]: AICR, ...options.images },
          kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
          baseEnv: { PATH: `${H100_BIN}:${process.env.PATH}`, AICR_HOST_ROOT: H100_ROOT, NO_COLOR: "1" },
        }),
    },
  });
}

export interface LogSink {
  log: Logger;
  lines: string[];
}

export function captureLog(): LogSink {
  const lines: string[] = [];
  return { lines, log: createLogger({ json: true, debug: true, write: (l) => void lines.push(l) }) };
}

export function adminClient(cluster: Cluster, user = "admin"): KubeClient {
  return KubeClient.connect({ kubeconfig: cluster.kubeconfigFor(user), env: {} });
}

let counter = 0;
/** Distinct run IDs within one test process, in the real format. */
export function testRunId(tag: string): string {
  counter++;
  const hex = `${tag}${counter.toString(16)}`
    .replace(/[^0-9a-f]/g, "0")
    .padEnd(16, "0")
    .slice(0, 16);
  return `20261129-120000-${hex}`;
}

export function newRun(
  client: KubeClient,
  sink: LogSink,
  config: Partial<AgentRunConfig> & { runId: string },
): AgentRun {
  const { runId, ...rest } = config;
  return new AgentRun(
    client,
    {
      namespace: "aicr-test",
      identity: { runId, invocationId: generateInvocationId() },
      image: AGENT_IMAGE,
      privileged: true,
      ...rest,
    },
    { log: sink.log, signal: new AbortController().signal },
  );
}

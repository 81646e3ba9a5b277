import { join } from "node:path";
import { Writable } from "node:stream";
import { AgentRun, type AgentRunConfig } from "../../src/agent/deployer.ts";
import { createLogger, type Logger } from "../../src/core/log.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { generateInvocationId } from "../../src/run/run-id.ts";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { processRuntime } from "../cluster/controllers/process-runtime.ts";
import { node } from "../cluster/nodes.ts";
import { type Backend, startTestCluster, type TestCluster } from "../cluster/testbed.ts";
import { AICR, ensureBuilt, ROOT } from "../e2e/_aicr.ts";

/** The agent image; the fake kubelet runs the compiled binary for it. */
export const AGENT_IMAGE = "ghcr.io/nvidia/aicr:test";
export const H100_ROOT = join(ROOT, "test/fixtures/hosts/h100-node");
export const H100_BIN = join(ROOT, "test/fixtures/bin/h100");
export const NS = "aicr-test";
/** Every agent test waits this long at most; the waits end on conditions, long before it. */
export const TEST_TIMEOUT_MS = 60_000;

export interface AgentCluster extends TestCluster {
  /**
   * Moves creationTimestamps (one-second resolution) past the ones already given: the fake's clock
   * jumps; on the real apiserver the wall clock is waited out.
   */
  advanceClock(ms: number): Promise<void>;
}

/** A cluster with a GPU node whose "container runtime" runs dist/aicr over an 8×H100 fixture host. */
export async function agentCluster(
  backend: Backend,
  options: { images?: Record<string, string> } = {},
): Promise<AgentCluster> {
  await ensureBuilt();
  let skew = 0;
  const cluster = await startTestCluster(backend, {
    now: () => new Date(Date.now() + skew),
    nodes: [node("gpu-node-1", { gpus: 8 }), node("cpu-node-1")],
    runtime: (api) =>
      processRuntime({
        images: { [AGENT_IMAGE]: AICR, ...options.images },
        kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
        baseEnv: { PATH: `${H100_BIN}:${process.env.PATH}`, AICR_HOST_ROOT: H100_ROOT, NO_COLOR: "1" },
      }),
  });
  const advanceClock = async (ms: number): Promise<void> => {
    if (cluster.fake) skew += ms;
    else await Bun.sleep(Math.min(ms, 1_100));
  };
  return Object.assign(cluster, { advanceClock });
}

export interface LogSink {
  log: Logger;
  lines: string[];
  /** Parsed JSON log records whose message contains `text`. */
  find(text: string): Record<string, unknown>[];
}

export function captureLog(): LogSink {
  const lines: string[] = [];
  return {
    lines,
    log: createLogger({ json: true, debug: true, write: (l) => void lines.push(l) }),
    find: (text) =>
      lines
        .filter((l) => l.includes(text))
        .map((l) => {
          try {
            return JSON.parse(l) as Record<string, unknown>;
          } catch {
            return { message: l };
          }
        }),
  };
}

export function adminClient(cluster: TestCluster, user = "admin"): KubeClient {
  return KubeClient.connect({ kubeconfig: cluster.kubeconfigFor(user), env: {} });
}

let counter = 0;
/** Distinct run IDs within one test process, in the real format: a unique counter first, the tag after. */
export function testRunId(tag: string): string {
  counter++;
  const hex = `${counter.toString(16).padStart(4, "0")}${tag.replace(/[^0-9a-f]/g, "0")}`
    .padEnd(16, "0")
    .slice(0, 16);
  return `20261129-120000-${hex}`;
}

export type RunOptions = Partial<AgentRunConfig> & {
  runId: string;
  invocationId?: string;
  /** The invocation's cancel signal (main.ts aborts it on SIGINT/SIGTERM). */
  signal?: AbortSignal;
};

export function newRun(client: KubeClient, sink: LogSink, config: RunOptions): AgentRun {
  const { runId, invocationId, signal, ...rest } = config;
  return new AgentRun(
    client,
    {
      namespace: NS,
      identity: { runId, invocationId: invocationId ?? generateInvocationId() },
      image: AGENT_IMAGE,
      privileged: true,
      nodeSelector: { "nvidia.com/gpu.present": "true" },
      ...rest,
    },
    { log: sink.log, signal: signal ?? new AbortController().signal },
  );
}

export function collector(): { out: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(Buffer.from(chunk));
      cb();
    },
  });
  return { out, text: () => Buffer.concat(chunks).toString("utf8") };
}

export interface Finished {
  logs: string;
  bytes: string;
  runId: string;
  jobUid: string;
}

/** deploy → own pod → its logs → completion → result, as the snapshot command drives a run. */
export async function driveRun(run: AgentRun): Promise<Finished> {
  await run.deploy();
  const pod = await run.waitForPod(TEST_TIMEOUT_MS);
  const logs = collector();
  await run.streamLogs(pod, logs.out);
  const outcome = await run.waitForCompletion(TEST_TIMEOUT_MS);
  if (!outcome.succeeded) throw new Error(`the agent Job failed: ${outcome.reason} ${outcome.message}`);
  const bytes = await run.readResult();
  const doc = parseSnapshot(bytes, "result");
  return {
    logs: logs.text(),
    bytes,
    runId: String(doc.metadata["run-id"]),
    jobUid: String(doc.metadata["job-uid"]),
  };
}

/** The identity the agent pod of a ServiceAccount authenticates as, for SubjectAccessReviews. */
export function serviceAccountSubject(namespace: string, name: string): { user: string; groups: string[] } {
  return {
    user: `system:serviceaccount:${namespace}:${name}`,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
  };
}

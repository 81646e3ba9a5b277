import { join } from "node:path";
import { Writable } from "node:stream";
import { startDeadline } from "../../src/core/deadline.ts";
import { createLogger, type Logger } from "../../src/core/log.ts";
import {
  AgentRun,
  type AgentRunConfig,
  type AgentRunPlan,
  type Deployment,
  type DeployOptions,
  type RunWaits,
  type Watchable,
} from "../../src/deployer/deployer.ts";
import type { ResultConfigMap } from "../../src/deployer/result.ts";
import type { JobOutcome, PodState } from "../../src/deployer/wait.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { ReceiptRow } from "../../src/run/cleanup.ts";
import type { CreatedSet } from "../../src/run/created-set.ts";
import { runLabels } from "../../src/run/labels.ts";
import { generateInvocationId } from "../../src/run/run-id.ts";
import { RunScope } from "../../src/run/scope.ts";
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

/**
 * One agent run as the snapshot command drives it, in steps a test can interleave: the AgentRun, its
 * run scope (the journal; cleanup is the scope's disposal) and the Deployment deploy() returned.
 */
export interface TestRun {
  readonly agent: AgentRun;
  readonly scope: RunScope;
  readonly plan: AgentRunPlan;
  readonly created: CreatedSet;
  /** What deploy() returned (undefined before it has). */
  readonly deployment: Deployment | undefined;
  readonly jobUid: string | undefined;
  readonly mode: Deployment["mode"] | undefined;
  deploy(options?: DeployOptions): Promise<Deployment>;
  /** Each wait has a deadline of its own here: `timeoutMs`, ending in TIMEOUT as a run's would. */
  waitForPod(timeoutMs: number, onPending?: (pod: PodState) => void): Promise<PodState>;
  waitForCompletion(timeoutMs: number): Promise<JobOutcome>;
  watchResult(timeoutMs: number): Promise<ResultConfigMap>;
  /** The three waits together, as the snapshot run opens them (from deploy's onWatchable). */
  openWaits(timeoutMs: number, stop: AbortSignal): RunWaits;
  streamLogs(pod: PodState, out: Writable): Promise<void>;
  readResult(seen?: ResultConfigMap): Promise<string>;
  lastPod(): Promise<PodState | undefined>;
  /** The scope's cleanup (once); its receipt. */
  cleanup(): Promise<ReceiptRow[]>;
}

export function newRun(client: KubeClient, sink: LogSink, config: RunOptions): TestRun {
  const { runId, invocationId, signal: given, ...rest } = config;
  const signal = given ?? new AbortController().signal;
  const identity = { runId, invocationId: invocationId ?? generateInvocationId() };
  const full: AgentRunConfig = {
    namespace: NS,
    identity,
    labels: runLabels(identity),
    image: AGENT_IMAGE,
    privileged: true,
    nodeSelector: { "nvidia.com/gpu.present": "true" },
    ...rest,
  };
  let deployment: Deployment | undefined;
  let watchable: Watchable | undefined;
  let agent: AgentRun | undefined;
  const scope = new RunScope({
    client,
    identity,
    log: sink.log,
    cleanup: true,
    removeCommand: () => (agent ? `kubectl delete clusterrole ${agent.plan.names.clusterRole}` : undefined),
    staging: () => (agent?.plan.ownsOutput ? agent.plan.output : undefined),
  });
  agent = new AgentRun(client, full, scope, { log: sink.log, signal });
  const run = agent;
  const w = (): Watchable => {
    if (!watchable) throw new Error("deploy() first: the waits open from its Watchable");
    return watchable;
  };
  const within = <T>(timeoutMs: number, wait: (s: AbortSignal) => Promise<T>): Promise<T> => {
    const deadline = startDeadline(signal, timeoutMs, { what: "the test's wait did not finish", remedy: "" });
    return wait(deadline.signal).finally(() => deadline[Symbol.dispose]());
  };
  return {
    agent: run,
    scope,
    plan: run.plan,
    created: scope.created,
    get deployment() {
      return deployment;
    },
    get jobUid() {
      return deployment?.uid;
    },
    get mode() {
      return deployment?.mode;
    },
    deploy: async (options = {}) => {
      deployment = await run.deploy({
        ...options,
        onWatchable: (x) => {
          watchable = x;
          options.onWatchable?.(x);
        },
      });
      return deployment;
    },
    waitForPod: (ms, onPending) => within(ms, (s) => run.waitForPod(w(), s, onPending)),
    waitForCompletion: (ms) => within(ms, (s) => run.waitForCompletion(w(), s)),
    watchResult: (ms) => within(ms, (s) => run.watchResult(w(), s)),
    openWaits: (ms, stop) => {
      const deadline = startDeadline(stop, ms, { what: "the test's waits did not finish", remedy: "" });
      const waits = run.openWaits(w(), deadline.signal);
      Promise.allSettled(Object.values(waits)).then(() => deadline[Symbol.dispose]());
      return waits;
    },
    streamLogs: (pod, out) => run.streamLogs(pod, out, signal),
    readResult: (seen) => run.readResult(seen),
    lastPod: () => run.lastPod(deployment?.uid ?? ""),
    cleanup: async () => {
      await scope[Symbol.asyncDispose]();
      return scope.receipt;
    },
  };
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
export async function driveRun(run: TestRun): Promise<Finished> {
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

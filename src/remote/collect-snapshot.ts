import { AgentRun, type AgentRunConfig, planAgentRun, type RunWaits } from "../agent/deployer.ts";
import { buildAgentJob, jobDeadlineSeconds } from "../agent/job-spec.ts";
import type { ResultConfigMap } from "../agent/result.ts";
import { type Placement, podFailure, startSentinel } from "../agent/sentinel.ts";
import { resolveServiceAccountMode, type ServiceAccountMode } from "../agent/service-account-mode.ts";
import { unlessAborted } from "../core/async.ts";
import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
import { toAicrError } from "../kube/errors.ts";
import { NoAnswerError } from "../kube/http.ts";
import type { ReceiptRow } from "../run/cleanup.ts";
import { generateInvocationId, generateRunId } from "../run/run-id.ts";
import { onForcedExit } from "../run/shutdown.ts";
import { parseSnapshot, type Snapshot } from "../snapshot/schema.ts";
import { agentLogRelay } from "./agent-log.ts";
import { gpuNodeSelector, startGpuNodeLookup } from "./auto-target.ts";
import type { SnapshotRunOptions } from "./options.ts";
import { checkPermissions } from "./permissions.ts";
import { createProgress } from "./progress.ts";

export interface CollectSnapshotOptions extends Omit<SnapshotRunOptions, "destination" | "format"> {
  client: KubeClient;
  log: Logger;
  signal: AbortSignal;
  /** Defaults to a fresh one: concurrent calls in one process never share a run. */
  runId?: string | undefined;
  /** The invocation's ID (the run context's); defaults to a fresh one. It goes on every object. */
  invocationId?: string | undefined;
  /**
   * Refuse, before anything is written, a run ID whose objects still stand. Default: when `runId` is
   * given. A generated one (64 random bits) cannot be in use, so it costs no look-up.
   */
  checkRunId?: boolean | undefined;
  /** A delivered cm:// target in the run's namespace; absent → the run's staging ConfigMap. */
  delivered?: { namespace: string; name: string } | undefined;
}

export interface CollectSnapshotResult {
  runId: string;
  /** The agent's YAML, byte for byte. */
  content: string;
  /** The same, parsed and checked against the snapshot schema. */
  document: Snapshot;
  /** What cleanup did; empty with cleanup off. */
  receipt: ReceiptRow[];
  /** What was kept with cleanup off. */
  kept: { kind: string; namespace?: string | undefined; name: string; uid?: string | undefined }[];
}

const CLEANUP_TIMEOUT_MS = 30_000;
/**
 * A Job that cannot create its pod says so only in an Event (FailedCreate). The Job controller
 * normally creates the pod within this long, so the run's Events are watched only if it has not.
 */
const SENTINEL_AFTER_MS = 1000;

function dryRunPod(run: AgentRun, config: AgentRunConfig, mode: ServiceAccountMode): KubeObject {
  const job = buildAgentJob({
    ...config,
    names: run.plan.names,
    labels: run.plan.labels,
    runId: config.identity.runId,
    // In prefix mode the run's ServiceAccount does not exist yet; admission of the pod itself is what is predicted.
    serviceAccountName: mode.mode === "exact" ? mode.name : "default",
    output: `cm://${run.plan.output.namespace}/${run.plan.output.name}`,
    outputIsStaging: run.plan.ownsOutput,
  });
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      generateName: `${run.plan.names.job}-`,
      namespace: config.namespace,
      labels: job.spec.template.metadata.labels,
    },
    spec: job.spec.template.spec,
  };
}

/**
 * The run's anchor and Job names must be free: a reused --run-id whose objects still stand is refused
 * here, before anything is created, instead of half-way through the creates. Read-only, and sent with
 * the gate.
 */
async function namesAreFree(
  client: KubeClient,
  run: AgentRun,
  namespace: string,
  runId: string,
): Promise<void> {
  const refs = [
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name: run.plan.names.clusterRole },
    { apiVersion: "batch/v1", kind: "Job", name: run.plan.names.job, namespace },
  ];
  const found = await Promise.all(
    refs.map((ref) =>
      client.get(ref).then(
        (obj) => ({ ref, uid: obj.metadata?.uid }),
        () => undefined, // 404 is the expected answer; a refusal is the gate's to report
      ),
    ),
  );
  const taken = found.filter((f) => f !== undefined);
  if (taken.length === 0) return;
  throw new AicrError(
    "CONFLICT",
    `run ID ${runId} is already in use: ${taken.map((t) => `${t.ref.kind} ${t.ref.name} (uid ${t.uid})`).join(", ")} exists`,
    {
      remedy:
        "omit --run-id / AICR_RUN_ID so this run gets a fresh one, or remove the earlier run's objects (aicr cleans up its own unless --no-cleanup was given)",
      context: { field: "--run-id" },
    },
  );
}

/**
 * Takes one node's snapshot through a run-isolated agent Job. Safe to call concurrently: each call
 * has its own run ID, invocation ID, objects, permissions, logs, result and cleanup.
 */
export async function collectSnapshot(o: CollectSnapshotOptions): Promise<CollectSnapshotResult> {
  const identity = {
    runId: o.runId ?? generateRunId(),
    invocationId: o.invocationId ?? generateInvocationId(),
  };
  const progress = createProgress(o.log);
  const config: AgentRunConfig = {
    ...o,
    identity,
    jobPrefix: o.jobPrefix,
    delivered: o.delivered,
    // A killed run's privileged pod is stopped by Kubernetes a minute after --timeout, not in 5 h.
    activeDeadlineSeconds: jobDeadlineSeconds(o.timeoutMs),
  };
  planAgentRun(config); // names are validated before the first request
  const fail = new AbortController();
  const signal = AbortSignal.any([o.signal, fail.signal]);
  // --timeout bounds the whole run from here, the gate and the log stream included (it would follow
  // a stuck agent forever). A server that has not answered anything by then is reported as silent.
  const deadline = Date.now() + o.timeoutMs;
  const deadlineTimer = setTimeout(
    () =>
      fail.abort(
        o.client.answered
          ? new AicrError("TIMEOUT", `the agent did not finish within --timeout ${formatMs(o.timeoutMs)}`, {
              remedy:
                "read the agent log above for where it stopped; raise --timeout if the node is just slow",
            })
          : toAicrError(new NoAnswerError(o.timeoutMs), "waiting for the API server", o.client.server),
      ),
    o.timeoutMs,
  );
  try {
    return await runWithin(o, { identity, progress, config, fail, signal, deadline });
  } finally {
    clearTimeout(deadlineTimer);
  }
}

interface RunScope {
  identity: { runId: string; invocationId: string };
  progress: ReturnType<typeof createProgress>;
  config: AgentRunConfig;
  fail: AbortController;
  signal: AbortSignal;
  deadline: number;
}

async function runWithin(o: CollectSnapshotOptions, scope: RunScope): Promise<CollectSnapshotResult> {
  const { identity, progress, config, fail, signal, deadline } = scope;
  let run = new AgentRun(o.client, config, { log: o.log, signal });

  // Read-only and fail-open: it goes out with the gate's questions instead of after them.
  const gpuLookup = o.autoTarget ? startGpuNodeLookup(o.client) : undefined;
  const free =
    (o.checkRunId ?? o.runId !== undefined)
      ? namesAreFree(o.client, run, o.namespace, identity.runId)
      : Promise.resolve();
  free.catch(() => {});
  // Read once, for the gate's admission prediction and then by the deployer (which creates it if absent).
  const namespaceRead = o.client
    .get({ apiVersion: "v1", kind: "Namespace", name: o.namespace })
    .catch((err: unknown) => err);
  const gate = await unlessAborted(
    checkPermissions(
      o.client,
      {
        namespace: o.namespace,
        outputNamespace: run.plan.output.namespace,
        namespaceRead,
        ownsOutput: run.plan.ownsOutput,
        discoverNetwork: o.discoverNetwork,
        resolveMode: () =>
          resolveServiceAccountMode(o.client, { namespace: o.namespace, name: o.serviceAccountName }),
        dryRunPod: (mode) => dryRunPod(run, config, mode),
        knownMode: o.serviceAccountName ? undefined : { mode: "prefix", prefix: undefined },
        signal,
      },
      o.log,
    ),
    signal,
  );
  await unlessAborted(free, signal);
  progress.phase("permissions checked", { mode: gate.mode.mode });
  let nodeSelector = o.nodeSelector;
  if (o.autoTarget) {
    nodeSelector = await unlessAborted(gpuNodeSelector(o.client, o.log, gpuLookup), signal);
    if (nodeSelector) run = new AgentRun(o.client, { ...config, nodeSelector }, { log: o.log, signal });
  }
  const placement = (): Placement => ({
    nodeSelector,
    tolerations: o.tolerations,
    autoTargeted: o.autoTarget && Boolean(nodeSelector),
  });
  const unregister = onForcedExit(() => leftoverReport(run, o.namespace));
  let sentinel: { stop: () => void } | undefined;
  const relay = agentLogRelay(o.log);
  const receipt: ReceiptRow[] = [];
  const kept: CollectSnapshotResult["kept"] = [];
  let sentinelTimer: ReturnType<typeof setTimeout> | undefined;
  let podSeen = false;
  const watches = new AbortController();
  let content = "";
  try {
    // The pod, the Job's end and the agent's write all arrive as events on watches opened while the
    // Job's create is in flight (from a resourceVersion that precedes it, no lists).
    const remaining = () => Math.max(1, deadline - Date.now());
    let waits: RunWaits | undefined;
    let seen: ResultConfigMap | undefined;
    const namespace = await namespaceRead;
    await run.deploy({
      mode: gate.mode,
      mayBind: gate.mayBind,
      namespace: namespace instanceof Error ? undefined : (namespace as KubeObject),
      onWatchable: () => {
        // A pending pod the cluster already knows cannot run (image pull, unschedulable) fails the run now.
        waits = run.openWaits(remaining(), watches.signal, (pending) => {
          podSeen = true;
          const cause = podFailure(pending, { image: o.image, placement: placement() });
          if (cause) fail.abort(cause);
        });
        waits.written.then(
          (cm) => (seen = cm),
          () => {},
        );
      },
    });
    if (!waits) throw new AicrError("INTERNAL", "the run's waits were not opened");
    progress.phase("run objects created", { job: run.plan.names.job });
    sentinelTimer = setTimeout(() => {
      if (podSeen || signal.aborted) return;
      sentinel = startSentinel(o.client, {
        namespace: o.namespace,
        jobUid: run.jobUid ?? "",
        timeoutMs: remaining(),
        log: o.log,
        onFailure: (err) => fail.abort(err),
      });
    }, SENTINEL_AFTER_MS);
    const { completion } = waits;
    // Every wait ends at once on SIGINT or a fail-fast cause, even with its request still in flight.
    const pod = await unlessAborted(waits.pod, signal);
    podSeen = true;
    progress.phase(
      `pod ${pod.metadata.name} running on ${(pod as { spec?: { nodeName?: string } }).spec?.nodeName ?? "?"}`,
    );
    await unlessAborted(run.streamLogs(pod, relay.out), signal);
    const outcome = await unlessAborted(completion, signal);
    if (!outcome.succeeded) throw await agentFailure(run, outcome, relay.lastLines());
    // The write's event normally came first; if it has not, the ConfigMap is read instead.
    content = await unlessAborted(run.readResult(seen), signal);
    progress.phase("result read");
  } finally {
    clearTimeout(sentinelTimer);
    watches.abort();
    sentinel?.stop();
    // Still registered while cleanup runs: a second Ctrl-C during cleanup must still say what may be left.
    try {
      if (o.cleanup) {
        receipt.push(...(await withTimeout(run.cleanup(), CLEANUP_TIMEOUT_MS)));
        const bad = receipt.filter((r) => r.outcome === "failed" || r.outcome === "left-behind");
        if (bad.length > 0)
          o.log.warn(`cleanup could not remove ${bad.length} object(s)`, {
            objects: bad.map((r) => `${r.kind}/${r.name}`).join(","),
          });
        progress.phase("cleaned up", { deleted: receipt.filter((r) => r.outcome === "deleted").length });
      } else {
        for (const e of run.created.list()) {
          kept.push({ kind: e.kind, namespace: e.namespace, name: e.name, uid: e.uid });
          o.log.info(`kept (--no-cleanup): ${e.kind} ${e.namespace ? `${e.namespace}/` : ""}${e.name}`, {
            uid: e.uid,
          });
        }
      }
    } finally {
      unregister();
    }
    // Cancelled after the result was read (during cleanup): still a cancelled run, nothing is delivered.
    o.signal.throwIfAborted();
  }
  // The agent's own serializer wrote it: Bun's YAML parser reads it (see parseSnapshot).
  const document = parseSnapshot(content, "the agent's snapshot", { native: true });
  return { runId: identity.runId, content, document, receipt, kept };
}

function formatMs(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new AicrError("TIMEOUT", `cleanup did not finish within ${ms / 1000}s`)),
      ms,
    );
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

async function agentFailure(
  run: AgentRun,
  outcome: { reason?: string | undefined; message?: string | undefined },
  lines: string[],
): Promise<AicrError> {
  const pod = await run.lastPod().catch(() => undefined);
  const terminated = (
    pod?.status?.containerStatuses?.[0]?.state as
      | { terminated?: { exitCode?: number; message?: string } }
      | undefined
  )?.terminated;
  const why = terminated?.message?.trim() || outcome.message || outcome.reason || "the agent failed";
  const tail =
    lines.length > 0
      ? `\n--- last ${lines.length} agent log lines ---\n${lines.join("\n")}\n--- end of agent log ---`
      : "";
  const code = outcome.reason === "DeadlineExceeded" ? "TIMEOUT" : "INTERNAL";
  return new AicrError(
    code,
    `the agent Job failed (${outcome.reason ?? "Failed"}${terminated?.exitCode !== undefined ? `, exit code ${terminated.exitCode}` : ""}): ${why}${tail}`,
    {
      remedy: "read the agent log above; rerun with --debug for the agent's detail",
    },
  );
}

function leftoverReport(run: AgentRun, namespace: string): string | undefined {
  const entries = run.created.list();
  if (entries.length === 0) return undefined;
  const anchor =
    run.mode?.mode === "exact"
      ? `kubectl delete job -n ${namespace} ${run.plan.names.job}`
      : `kubectl delete clusterrole ${run.plan.names.clusterRole}`;
  const lines = entries.map(
    (e) => `  ${e.kind} ${e.namespace ? `${e.namespace}/` : ""}${e.name} uid=${e.uid ?? "(unconfirmed)"}`,
  );
  return `exiting without cleanup; this run may have left:\n${lines.join("\n")}\nremove them all with (the garbage collector takes the rest): ${anchor}`;
}

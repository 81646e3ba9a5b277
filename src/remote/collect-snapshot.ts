import { unlessAborted, withTimeout } from "../core/async.ts";
import { DeadlineExceeded } from "../core/deadline.ts";
import { AicrError } from "../core/errors.ts";
import { LABEL, LABEL_VALUE } from "../core/labels.ts";
import { createLogger } from "../core/log.ts";
import {
  AgentRun,
  type AgentRunConfig,
  type AgentRunPlan,
  type Deployment,
  planAgentRun,
  type RunWaits,
} from "../deployer/deployer.ts";
import { agentJobFailure } from "../deployer/failure.ts";
import { buildAgentJob, jobDeadlineSeconds } from "../deployer/job-spec.ts";
import { type Placement, podFailure, startSentinel } from "../deployer/sentinel.ts";
import type { ServiceAccountMode } from "../deployer/service-account-mode.ts";
import { describePodState } from "../deployer/wait.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
import { isForbidden, isNotFound, toAicrError } from "../kube/errors.ts";
import type { ReceiptRow } from "../run/cleanup.ts";
import { type OpenRun, type RunCallerOptions, withRun } from "../run/pipeline.ts";
import type { Progress } from "../run/progress.ts";
import type { KeptObject } from "../run/scope.ts";
import { assertGpuFound, withProviderReadings } from "../snapshot/render.ts";
import { envelopeMissingMessage, parseSnapshot, type Snapshot } from "../snapshot/schema.ts";
import { serializeSnapshot } from "../snapshot/serialize.ts";
import { agentLogRelay } from "./_agent-log.ts";
import { podOfJob, runIdIsFree } from "./_gate-reads.ts";
import { checkPermissions } from "./_permissions.ts";
import { gpuNodeSelector, startGpuNodeLookup } from "./auto-target.ts";
import { type ResolvedSnapshotOptions, type SnapshotOptions, withSnapshotDefaults } from "./options.ts";

export interface CollectSnapshotOptions extends SnapshotOptions, RunCallerOptions {
  /** A delivered cm:// target in the run's namespace; absent → the run's staging ConfigMap. */
  delivered?: { namespace: string; name: string } | undefined;
}

export interface CollectSnapshotResult {
  runId: string;
  /** The agent's YAML, byte for byte; re-serialized when provider readings were merged in. */
  content: string;
  /** The same, parsed and checked against the snapshot schema. */
  document: Snapshot;
  /** What cleanup did; empty with cleanup off. */
  receipt: ReceiptRow[];
  /** What was kept with cleanup off. */
  kept: KeptObject[];
}

/**
 * A Job that cannot create its pod says so only in an Event (FailedCreate). The Job controller
 * normally creates the pod within this long, so the run's Events are watched only if it has not.
 */
const SENTINEL_AFTER_MS = 1000;
/** How long, past the deadline, the run may take to look up where it stood. */
const WHERE_LOOKUP_MS = 5000;

function dryRunPod(plan: AgentRunPlan, config: AgentRunConfig, mode: ServiceAccountMode): KubeObject {
  const job = buildAgentJob({
    ...config,
    names: plan.names,
    labels: plan.labels,
    runId: config.identity.runId,
    // In prefix mode the run's ServiceAccount does not exist yet; admission of the pod itself is what is predicted.
    serviceAccountName: mode.kind === "exact" ? mode.name : "default",
    output: `cm://${plan.output.namespace}/${plan.output.name}`,
    outputIsStaging: plan.ownsOutput,
  });
  return podOfJob(job, config.namespace);
}

/**
 * A delivered cm:// target that exists must be aicr's (labelled app.kubernetes.io/name=aicr, as the
 * agent writes it) unless --overwrite was given: a ConfigMap aicr never wrote is not written into.
 * Read-only, sent with the gate; settles to an error to throw, or undefined.
 */
async function targetIsWritable(
  client: KubeClient,
  target: { namespace: string; name: string },
  overwrite: boolean,
): Promise<AicrError | undefined> {
  if (overwrite) return undefined;
  const uri = `cm://${target.namespace}/${target.name}`;
  const remedy = `pass --overwrite to write into it anyway, or choose another name for --output`;
  let live: KubeObject;
  try {
    live = await client.get({ apiVersion: "v1", kind: "ConfigMap", ...target });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    if (isForbidden(err))
      return new AicrError(
        "UNAUTHORIZED",
        `cannot check whether ConfigMap ${target.namespace}/${target.name} (--output ${uri}) was written by aicr: the caller may not read it`,
        {
          remedy: `ask for get on configmaps in namespace ${target.namespace}, or ${remedy}`,
          context: { field: "--output" },
          cause: err,
        },
      );
    return toAicrError(err, `reading ConfigMap ${target.namespace}/${target.name}`, client.server);
  }
  if (live.metadata?.labels?.[LABEL.name] === LABEL_VALUE.app) return undefined;
  return new AicrError(
    "CONFLICT",
    `ConfigMap ${target.namespace}/${target.name} (--output ${uri}) exists and was not written by aicr (no label ${LABEL.name}=${LABEL_VALUE.app}): nothing was deployed`,
    { remedy, context: { field: "--output" } },
  );
}

/**
 * Takes one node's snapshot through a run-isolated agent Job. Safe to call concurrently: each call
 * has its own run ID, invocation ID, objects, permissions, logs, result and cleanup.
 *
 * One run (run/pipeline.ts): the gate (permissions, auto-targeting), then the agent (deploy, pod, logs,
 * result), then teardown.
 */
export async function collectSnapshot(options: CollectSnapshotOptions): Promise<CollectSnapshotResult> {
  const o = withSnapshotDefaults(options);
  if (options.delivered && o.providerReadings?.length)
    throw new AicrError(
      "INVALID_REQUEST",
      "provider readings cannot be merged into a delivered cm:// target: the agent writes it without them",
      {
        remedy: "deliver to stdout or a file, or leave out the provider files",
        context: { field: "--output" },
      },
    );
  const { client } = options;
  const log = options.log ?? createLogger({ write: () => {} });
  const run = await withRun(
    {
      ...options,
      log,
      timeoutMs: o.timeoutMs,
      cleanup: o.cleanup,
      timeout: {
        what: "the agent did not finish",
        remedy: "read the agent log above for where it stopped; raise --timeout if the node is just slow",
      },
    },
    {
      plan: (identity, labels) => {
        const config: AgentRunConfig = {
          ...o,
          identity,
          labels,
          delivered: options.delivered,
          // A killed run's privileged pod is stopped by Kubernetes a minute after --timeout, not in 5 h.
          activeDeadlineSeconds: jobDeadlineSeconds(o.timeoutMs),
        };
        return { ...planAgentRun(config), config };
      },
      gate: (run, plan) => gateRun(o, options, plan, run),
      gateFields: (gate) => ({ mode: gate.mode.kind }),
      scope: (run, plan, gate) => ({
        removeCommand: () =>
          `aicr runs delete ${plan.config.identity.runId} -n ${o.namespace} (or: ${
            gate.mode.kind === "exact"
              ? `kubectl delete job -n ${o.namespace} ${plan.names.job}`
              : `kubectl delete clusterrole ${plan.names.clusterRole}`
          })`,
        staging: () => (plan.ownsOutput ? plan.output : undefined),
        announce: (message, fields) => run.progress.phase(message, fields),
      }),
      execute: (run, plan, gate) =>
        execute(
          new AgentRun(client, { ...plan.config, nodeSelector: gate.nodeSelector }, run.scope, run),
          o,
          gate,
          run,
          // The agent's own serializer wrote it: Bun's YAML parser reads it (see parseSnapshot). An
          // agent image of the Go original may write a document without an envelope: read, and said once.
          (text) =>
            parseSnapshot(text, "the agent's snapshot", {
              native: true,
              onEnvelopeMissing: (source) => log.warn(envelopeMissingMessage(source)),
            }),
        ),
    },
  );
  let { content } = run.value;
  const collected = run.value.document;
  // --require-gpu: a node that counts no GPU fails the run (NOT_FOUND); nothing is returned.
  if (o.requireGpu)
    assertGpuFound(
      collected,
      options.delivered ? `cm://${options.delivered.namespace}/${options.delivered.name}` : undefined,
    );
  // Provider readings are this side's: merged into the K8s measurement, the YAML written again.
  const document = withProviderReadings(collected, o.providerReadings);
  if (document !== collected) content = serializeSnapshot(document, "yaml");
  return { runId: run.runId, content, document, receipt: run.receipt, kept: run.kept };
}

type SnapshotPlan = AgentRunPlan & { config: AgentRunConfig };

interface Gate {
  mode: ServiceAccountMode;
  mayBind: boolean;
  nodeSelector: Record<string, string> | undefined;
  namespace: KubeObject | undefined;
}

/** Everything read-only before the first write: permissions, a free run ID, auto-targeting. */
async function gateRun(
  o: ResolvedSnapshotOptions,
  options: CollectSnapshotOptions,
  plan: SnapshotPlan,
  { client, log, signal }: OpenRun,
): Promise<Gate> {
  const { config } = plan;
  // Read-only and fail-open: it goes out with the gate's questions instead of after them.
  const gpuLookup = o.autoTarget ? startGpuNodeLookup(client) : undefined;
  const free =
    (options.checkRunId ?? options.runId !== undefined)
      ? runIdIsFree(
          client,
          [
            { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name: plan.names.clusterRole },
            { apiVersion: "batch/v1", kind: "Job", name: plan.names.job, namespace: o.namespace },
          ],
          config.identity.runId,
        )
      : Promise.resolve();
  free.catch(() => {});
  const target = options.delivered
    ? targetIsWritable(client, options.delivered, o.overwrite)
    : Promise.resolve(undefined);
  // Read once, for the gate's admission prediction and then by the deployer (which creates it if absent).
  const namespaceRead = client
    .get({ apiVersion: "v1", kind: "Namespace", name: o.namespace })
    .catch((err: unknown) => err);
  const gate = await unlessAborted(
    checkPermissions(
      client,
      {
        namespace: o.namespace,
        outputNamespace: plan.output.namespace,
        namespaceRead,
        ownsOutput: plan.ownsOutput,
        discoverNetwork: o.discoverNetwork,
        serviceAccountName: o.serviceAccountName,
        dryRunPod: (mode) => dryRunPod(plan, config, mode),
        signal,
      },
      log,
    ),
    signal,
  );
  await unlessAborted(free, signal);
  const refused = await unlessAborted(target, signal);
  if (refused) throw refused;
  const nodeSelector = o.autoTarget
    ? await unlessAborted(gpuNodeSelector(client, log, gpuLookup), signal)
    : o.nodeSelector;
  const namespace = await namespaceRead;
  return {
    mode: gate.mode,
    mayBind: gate.mayBind,
    nodeSelector,
    namespace: namespace instanceof Error ? undefined : (namespace as KubeObject),
  };
}

/** The agent's document, as the run's end proved it (deployer/run-end.ts). */
interface Collected {
  content: string;
  document: Snapshot;
}

/** deploy → pod → logs, alongside the run's end (proof or failure) → result. */
async function execute(
  agent: AgentRun,
  o: ResolvedSnapshotOptions,
  gate: Gate,
  ctx: OpenRun,
  parse: (content: string) => Snapshot,
): Promise<Collected> {
  const { client, log, signal, deadline, progress } = ctx;
  const placement = (): Placement => ({
    nodeSelector: gate.nodeSelector,
    tolerations: o.tolerations,
    autoTargeted: o.autoTarget && Boolean(gate.nodeSelector),
  });
  const relay = agentLogRelay(log, () => progress.heard());
  let stage = "";
  // Where the run waits, said every interval with what it last saw and the time left.
  const enter = (what: string, w?: Parameters<Progress["wait"]>[1]) => {
    stage = what;
    progress.wait(what, w);
  };
  let podState: string | undefined;
  enter("creating the run's objects");
  let deployment: Deployment | undefined;
  let sentinel: { stop: () => void } | undefined;
  let sentinelTimer: ReturnType<typeof setTimeout> | undefined;
  let podSeen = false;
  const watches = new AbortController();
  const logStop = new AbortController();
  let logs: Promise<void> | undefined;
  try {
    // The pod, its end, the Job's end and the agent's write all arrive as events on watches opened
    // while the Job's create is in flight (from a resourceVersion that precedes it, no lists).
    let waits: RunWaits | undefined;
    deployment = await agent.deploy({
      mode: gate.mode,
      mayBind: gate.mayBind,
      namespace: gate.namespace,
      onWatchable: (w) => {
        // A pending pod the cluster already knows cannot run (image pull, unschedulable) fails the run now.
        waits = agent.openWaits(w, watches.signal, (pending) => {
          podSeen = true;
          podState = describePodState(pending);
          const cause = podFailure(pending, { image: o.image, placement: placement() });
          if (cause) deadline.fail(cause);
        });
      },
    });
    if (!waits) throw new AicrError("INTERNAL", "the run's waits were not opened");
    const jobUid = deployment.uid;
    progress.phase("run objects created", { job: agent.plan.names.job });
    sentinelTimer = setTimeout(() => {
      if (podSeen || signal.aborted) return;
      sentinel = startSentinel(client, {
        namespace: o.namespace,
        jobUid,
        signal,
        log,
        onFailure: (err) => deadline.fail(err),
      });
    }, SENTINEL_AFTER_MS);
    const ending = agent.awaitEnd(waits, jobUid, (cm) => parse(agent.resultContent(cm)));
    ending.catch(() => {});
    // Every wait ends at once on SIGINT, the deadline or a fail-fast cause, even with its request in flight.
    enter("waiting for the agent pod to start", {
      saw: () => podState ?? "no pod of this run's Job was seen yet",
    });
    const started = await unlessAborted(Promise.race([waits.pod, ending.then(() => undefined)]), signal);
    if (started) {
      podSeen = true;
      progress.phase(
        `pod ${started.metadata.name} running on ${(started as { spec?: { nodeName?: string } }).spec?.nodeName ?? "?"}`,
      );
      // The log is followed alongside the run's end: it never holds the run open (see drainLog).
      logs = agent.streamLogs(started, relay.out, logStop.signal).catch((err: unknown) => {
        if (!logStop.signal.aborted)
          log.debug("the agent's log stream ended", { cause: (err as Error).message });
      });
      stage = `waiting for the agent in pod ${started.metadata.name} to finish`;
      progress.wait(`agent in pod ${started.metadata.name} running`, { quiet: true });
    }
    const end = await unlessAborted(ending, signal);
    // A failure's message carries the log's tail: it may wait longer for it than a proven result.
    await drainLog(logs, logStop, end.ok ? LOG_DRAIN_MS : FAILURE_LOG_DRAIN_MS);
    if (!end.ok) {
      const pod = end.pod ?? (await agent.lastPod(jobUid).catch(() => undefined));
      throw agentJobFailure(end.condition, pod, {
        remedy: "read the agent log above; rerun with --debug for the agent's detail",
        logTail: relay.lastLines(),
      });
    }
    agent.confirmResult(end.cm);
    progress.phase(end.by === "pod" ? "result proven" : "result read");
    return { content: end.content, document: end.document };
  } catch (err) {
    // The deadline's TIMEOUT, told once, with where the run stood.
    if (err instanceof DeadlineExceeded) throw err.at(await where(agent, stage, deployment));
    throw err;
  } finally {
    clearTimeout(sentinelTimer);
    progress.idle(); // teardown's phase line counts its own time
    watches.abort();
    logStop.abort();
    sentinel?.stop();
  }
}

/**
 * Once the run's end is known, the agent's last log lines may still be on their way: they get up to
 * this long to arrive (normally the stream ends with the container, well before), then the stream is
 * closed and the run moves on.
 */
const LOG_DRAIN_MS = 500;
const FAILURE_LOG_DRAIN_MS = 2000;

async function drainLog(logs: Promise<void> | undefined, stop: AbortController, ms: number): Promise<void> {
  if (!logs) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([logs, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
  stop.abort();
}

/** Where a run stood when its deadline passed: the stage, and its pod's last state if there is one. */
async function where(agent: AgentRun, stage: string, deployment: Deployment | undefined): Promise<string> {
  if (!deployment) return stage;
  const pod = await withTimeout(
    agent.lastPod(deployment.uid),
    WHERE_LOOKUP_MS,
    () => new Error("no answer"),
  ).catch(() => undefined);
  return `${stage}; ${describePodState(pod)}`;
}

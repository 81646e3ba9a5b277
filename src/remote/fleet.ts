import { type AgentRunConfig, planAgentRun } from "../agent/deployer.ts";
import { buildNodeJob, FleetRun, type FleetShared, type NodeJob } from "../agent/fleet-deployer.ts";
import { FleetDispatcher, type JobState } from "../agent/fleet-dispatch.ts";
import { jobDeadlineSeconds } from "../agent/job-spec.ts";
import type { Placement } from "../agent/sentinel.ts";
import type { ServiceAccountMode } from "../agent/service-account-mode.ts";
import type { PodState } from "../agent/wait.ts";
import { mapLimit, unlessAborted } from "../core/async.ts";
import { AicrError, errorMessage, isAicrError } from "../core/errors.ts";
import { createLogger, type Logger } from "../core/log.ts";
import type { KubeClient, KubeObject } from "../kube/client.ts";
import { toAicrError } from "../kube/errors.ts";
import { watchUntil } from "../kube/watch-until.ts";
import type { ReceiptRow } from "../run/cleanup.ts";
import { runPodSelector } from "../run/labels.ts";
import { fleetNodeNames } from "../run/names.ts";
import { generateInvocationId, generateRunId } from "../run/run-id.ts";
import { RunScope } from "../run/scope.ts";
import { assertGpuFound, withProviderReadings } from "../snapshot/render.ts";
import { parseSnapshot } from "../snapshot/schema.ts";
import { serializeSnapshot } from "../snapshot/serialize.ts";
import { waitNodeJob } from "./_fleet-node.ts";
import {
  DEFAULT_PARALLELISM,
  type FleetNodeRecord,
  type FleetReport,
  fleetReport,
  formatFleetProgress,
  selectFleetNodes,
} from "./_fleet-plan.ts";
import { podOfJob, runIdIsFree } from "./_gate-reads.ts";
import { checkPermissions } from "./_permissions.ts";
import { progressIntervalMs, terminalStatus } from "./_progress.ts";
import { GPU_NODE_LABEL } from "./auto-target.ts";
import { type SnapshotOptions, withSnapshotDefaults } from "./options.ts";

/** The fleet's public pieces for the command layer (the plan module is private to src/remote). */
export { DEFAULT_PARALLELISM, type FleetReport, fleetFailure } from "./_fleet-plan.ts";

export interface FleetSnapshotOptions extends SnapshotOptions {
  client: KubeClient;
  log?: Logger | undefined;
  signal?: AbortSignal | undefined;
  runId?: string | undefined;
  invocationId?: string | undefined;
  /** Refuse a run ID whose anchor still stands (default: when `runId` is given). */
  checkRunId?: boolean | undefined;
  /** One node's bound (--node-timeout); absent → only the run's --timeout bounds it. */
  nodeTimeoutMs?: number | undefined;
  /** Agent Jobs at once (default DEFAULT_PARALLELISM). */
  parallelism?: number | undefined;
  maxNodes?: number | undefined;
  sample?: number | undefined;
  /** Each node's document: the agent's YAML as written, or JSON. */
  format?: "yaml" | "json" | undefined;
  progressIntervalMs?: number | undefined;
  statusLine?: boolean | undefined;
}

export interface FleetNodeResult {
  record: FleetNodeRecord;
  /** The node's document (ok nodes only). */
  content?: string | undefined;
}

export interface FleetSnapshotResult {
  runId: string;
  nodes: FleetNodeResult[];
  report: FleetReport;
  receipt: ReceiptRow[];
}

/** The label selector that names the fleet: --node-selector, else the GPU nodes, else every node. */
export function fleetSelector(o: {
  nodeSelector?: Record<string, string> | undefined;
  autoTarget: boolean;
}): string {
  if (o.nodeSelector && Object.keys(o.nodeSelector).length > 0)
    return Object.entries(o.nodeSelector)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
  return o.autoTarget ? `${GPU_NODE_LABEL}=true` : "";
}

/**
 * Every target node's snapshot in ONE run: one run ID, one set of run RBAC, one agent Job per node
 * (pinned by required node affinity on its hostname), at most `parallelism` at once. ONE pod watch and
 * ONE Job watch serve the whole run (label selector on the run ID; each event routed to its node by
 * Job UID); each node then costs a constant number of requests (its Job's create, its result's read).
 * A node that fails is recorded and the others go on; the run scope cleans everything up.
 */
export async function collectFleet(options: FleetSnapshotOptions): Promise<FleetSnapshotResult> {
  const o = withSnapshotDefaults(options);
  const parallelism = options.parallelism ?? DEFAULT_PARALLELISM;
  if (!(Number.isInteger(parallelism) && parallelism >= 1))
    throw new AicrError(
      "INVALID_REQUEST",
      `invalid parallelism ${parallelism}: expected a whole number ≥ 1`,
      { context: { field: "--parallelism" } },
    );
  if (!(Number.isFinite(o.timeoutMs) && o.timeoutMs > 0))
    throw new AicrError("INVALID_REQUEST", `invalid timeoutMs ${o.timeoutMs}: expected a positive number`);
  const { client } = options;
  const log = options.log ?? createLogger({ write: () => {} });
  const signal = options.signal ?? new AbortController().signal;
  const identity = {
    runId: options.runId ?? generateRunId(),
    invocationId: options.invocationId ?? generateInvocationId(),
  };
  const config: AgentRunConfig = { ...o, identity, activeDeadlineSeconds: jobDeadlineSeconds(o.timeoutMs) };
  const plan = planAgentRun(config);
  fleetNodeNames({ runId: identity.runId, jobPrefix: o.jobPrefix }, 0); // names checked before any request
  const selector = fleetSelector(o);

  // The gate: read-only, all at once. The node list is the fleet; its failure is the run's.
  const nodeList = client.list<KubeObject>("v1", "Node", selector ? { labelSelector: selector } : {});
  nodeList.catch(() => {});
  const namespaceRead = client
    .get({ apiVersion: "v1", kind: "Namespace", name: o.namespace })
    .catch((err: unknown) => err);
  const free =
    (options.checkRunId ?? options.runId !== undefined)
      ? runIdIsFree(
          client,
          [{ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name: plan.names.clusterRole }],
          identity.runId,
        )
      : Promise.resolve();
  free.catch(() => {});
  const gate = await checkPermissions(
    client,
    {
      namespace: o.namespace,
      outputNamespace: o.namespace,
      namespaceRead,
      ownsOutput: true,
      discoverNetwork: o.discoverNetwork,
      serviceAccountName: o.serviceAccountName,
      dryRunPod: (mode) => dryRunPod(config, plan, mode),
      signal,
    },
    log,
  );
  await unlessAborted(free, signal);
  let listed: KubeObject[];
  try {
    listed = (await unlessAborted(nodeList, signal)).items;
  } catch (err) {
    throw isAicrError(err) ? err : toAicrError(err, "listing the fleet's nodes", client.server);
  }
  const nodes = selectFleetNodes(
    listed.map((n) => n.metadata?.name ?? "").filter(Boolean),
    { sample: options.sample, maxNodes: options.maxNodes },
    selector || "every node",
  );
  log.info(
    `fleet: ${nodes.length} node(s) (${selector || "every node"}), at most ${parallelism} agent Job(s) at once`,
    { runId: identity.runId },
  );
  const namespace = await namespaceRead;

  const scope = new RunScope({
    client,
    identity,
    log,
    cleanup: o.cleanup,
    removeCommand: () => `aicr runs delete ${identity.runId} -n ${o.namespace}`,
  });
  const results: FleetNodeResult[] = [];
  {
    await using _ = scope;
    const fleet = new FleetRun(client, config, scope, { log, signal });
    const shared = await fleet.deployShared({
      mode: gate.mode,
      mayBind: gate.mayBind,
      namespace: namespace instanceof Error ? undefined : (namespace as KubeObject),
    });
    results.push(
      ...(await runNodes(fleet, shared, nodes, {
        ...options,
        ...o,
        parallelism,
        log,
        signal,
        runId: identity.runId,
      })),
    );
  }
  signal.throwIfAborted();
  return {
    runId: identity.runId,
    nodes: results,
    report: fleetReport(
      identity.runId,
      results.map((r) => r.record),
    ),
    receipt: scope.receipt,
  };
}

function dryRunPod(
  config: AgentRunConfig,
  plan: ReturnType<typeof planAgentRun>,
  mode: ServiceAccountMode,
): KubeObject {
  const { job } = buildNodeJob(
    config,
    plan,
    { serviceAccountName: mode.kind === "exact" ? mode.name : "default", owner: undefined },
    "node",
    0,
  );
  return podOfJob(job, config.namespace);
}

type RunNodesOptions = FleetSnapshotOptions &
  ReturnType<typeof withSnapshotDefaults> & {
    parallelism: number;
    log: Logger;
    signal: AbortSignal;
    runId: string;
  };

/** The two run-wide watches, the bounded Job creates, each node's wait and read; progress on one line. */
async function runNodes(
  fleet: FleetRun,
  shared: FleetShared,
  nodes: string[],
  o: RunNodesOptions,
): Promise<FleetNodeResult[]> {
  const { client, log, signal } = o;
  const dispatcher = new FleetDispatcher();
  const watches = new AbortController();
  const watchSignal = AbortSignal.any([signal, watches.signal]);
  const list = { namespace: o.namespace, labelSelector: runPodSelector(o.runId) };
  const open = [
    watchUntil<PodState, never>({
      client,
      apiVersion: "v1",
      kind: "Pod",
      plural: "pods",
      list,
      signal: watchSignal,
      resourceVersion: shared.watchFrom,
      check: (pod, type) => void dispatcher.pod(pod, type) as undefined,
    }),
    watchUntil<JobState, never>({
      client,
      apiVersion: "batch/v1",
      kind: "Job",
      plural: "jobs",
      list,
      signal: watchSignal,
      resourceVersion: shared.watchFrom,
      check: (job, type) => void dispatcher.job(job, type) as undefined,
    }),
  ];
  for (const w of open)
    w.catch((err: unknown) => {
      if (!watchSignal.aborted)
        log.warn(`a fleet watch ended: ${errorMessage(err)}; nodes still waiting will time out`);
    });
  const placement: Placement = {
    nodeSelector: o.nodeSelector,
    tolerations: o.tolerations,
    autoTargeted: false,
  };
  const counts = { total: nodes.length, done: 0, failed: 0, running: 0 };
  const t0 = performance.now();
  const status = o.statusLine ? terminalStatus() : undefined;
  const say = () => {
    const line = formatFleetProgress(counts, performance.now() - t0);
    if (status) status(`\r\x1b[K${line}`);
    else log.info(line);
  };
  const ticker = setInterval(say, o.progressIntervalMs ?? progressIntervalMs());
  const one = async (node: string, index: number): Promise<FleetNodeResult> => {
    const started = new Date();
    counts.running++;
    let job: NodeJob | undefined;
    const jobName = () => job?.job ?? fleetNodeNames({ runId: o.runId, jobPrefix: o.jobPrefix }, index).job;
    const record = (extra: Partial<FleetNodeRecord>): FleetNodeRecord => {
      const finished = new Date();
      return {
        node,
        status: "ok",
        job: jobName(),
        started: started.toISOString(),
        finished: finished.toISOString(),
        durationMs: finished.getTime() - started.getTime(),
        ...extra,
      };
    };
    try {
      job = await fleet.createNodeJob(shared, node, index);
      await waitNodeJob(dispatcher, job, { timeoutMs: o.timeoutMs, image: o.image, placement, signal });
      const content = await fleet.readNodeResult(job);
      const parsed = parseSnapshot(content, `node ${node}'s snapshot`, {
        native: true,
        onEnvelopeMissing: () => {},
      });
      if (o.requireGpu) assertGpuFound(parsed);
      const doc = withProviderReadings(parsed, o.providerReadings);
      const out =
        o.format === "json"
          ? serializeSnapshot(doc, "json")
          : doc === parsed
            ? content
            : serializeSnapshot(doc, "yaml");
      counts.done++;
      return { record: record({}), content: out };
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      counts.failed++;
      const e = isAicrError(err) ? err : toAicrError(err, `node ${node}`, client.server);
      log.warn(`node ${node} failed: ${errorMessage(e)}`, { code: e.code, job: jobName() });
      return { record: record({ status: "failed", error: { code: e.code, message: errorMessage(e) } }) };
    } finally {
      counts.running--;
      if (status) say();
    }
  };
  try {
    return await mapLimit(nodes, o.parallelism, one, signal);
  } finally {
    clearInterval(ticker);
    watches.abort();
    if (status) status("\r\x1b[K");
    log.info(formatFleetProgress(counts, performance.now() - t0));
  }
}

import { mapLimit, unlessAborted } from "../core/async.ts";
import { AicrError, errorMessage, isAicrError } from "../core/errors.ts";
import { type AgentRunConfig, type AgentRunPlan, planAgentRun } from "../deployer/deployer.ts";
import { buildNodeJob, FleetRun, type FleetShared, type NodeJob } from "../deployer/fleet-deployer.ts";
import { FleetDispatcher, type JobObject } from "../deployer/fleet-dispatch.ts";
import { jobDeadlineSeconds } from "../deployer/job-spec.ts";
import type { Placement } from "../deployer/sentinel.ts";
import type { ServiceAccountMode } from "../deployer/service-account-mode.ts";
import type { PodState } from "../deployer/wait.ts";
import type { KubeObject } from "../kube/client.ts";
import { toAicrError } from "../kube/errors.ts";
import { watchUntil } from "../kube/watch-until.ts";
import type { ReceiptRow } from "../run/cleanup.ts";
import { runPodSelector } from "../run/labels.ts";
import { fleetNodeNames } from "../run/names.ts";
import { type OpenRun, type RunCallerOptions, withRun } from "../run/pipeline.ts";
import { assertGpuFound, withProviderReadings } from "../snapshot/render.ts";
import { parseSnapshot } from "../snapshot/schema.ts";
import { serializeSnapshot } from "../snapshot/serialize.ts";
import { awaitNodeEnd } from "./_fleet-node.ts";
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
import { GPU_NODE_LABEL } from "./auto-target.ts";
import { type ResolvedSnapshotOptions, type SnapshotOptions, withSnapshotDefaults } from "./options.ts";

/** The fleet's public pieces for the command layer (the plan module is private to src/remote). */
export { DEFAULT_PARALLELISM, type FleetReport, fleetFailure } from "./_fleet-plan.ts";

export interface FleetSnapshotOptions extends SnapshotOptions, RunCallerOptions {
  /** One node's bound (--node-timeout); absent → only the run's --timeout bounds it. */
  nodeTimeoutMs?: number | undefined;
  /** Agent Jobs at once (default DEFAULT_PARALLELISM). */
  parallelism?: number | undefined;
  maxNodes?: number | undefined;
  sample?: number | undefined;
  /** Each node's document: the agent's YAML as written, or JSON. */
  format?: "yaml" | "json" | undefined;
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
 * (pinned by required node affinity on its hostname), at most `parallelism` at once, all within the
 * run's one --timeout. ONE pod watch and ONE Job watch serve the whole run (label selector on the run
 * ID; each event routed to its node by Job UID); each node then costs a constant number of requests
 * (its Job's create, its result's read). A node that fails is recorded and the others go on; when the
 * run's time is up, every node without its result is recorded as timed out; the run scope cleans
 * everything up.
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
  const { client } = options;
  const cancel = options.signal ?? new AbortController().signal;
  const selector = fleetSelector(o);
  const run = await withRun(
    {
      ...options,
      timeoutMs: o.timeoutMs,
      cleanup: o.cleanup,
      timeout: {
        what: "the fleet did not finish",
        remedy: "raise --timeout for a large fleet (or --parallelism); each node's outcome is in fleet.json",
      },
    },
    {
      plan: (identity, labels) => {
        const config: AgentRunConfig = {
          ...o,
          identity,
          labels,
          activeDeadlineSeconds: jobDeadlineSeconds(options.nodeTimeoutMs ?? o.timeoutMs),
        };
        fleetNodeNames({ runId: identity.runId, jobPrefix: o.jobPrefix }, 0); // names checked before any request
        return { ...planAgentRun(config), config };
      },
      gate: (run, plan) => gateFleet(o, options, plan, selector, run),
      gateFields: (gate) => ({ mode: gate.mode.kind, nodes: gate.nodes.length }),
      scope: (_run, plan) => ({
        removeCommand: () => `aicr runs delete ${plan.config.identity.runId} -n ${o.namespace}`,
      }),
      execute: async (run, plan, gate) => {
        run.log.info(
          `fleet: ${gate.nodes.length} node(s) (${selector || "every node"}), at most ${parallelism} agent Job(s) at once`,
          { runId: plan.config.identity.runId },
        );
        const fleet = new FleetRun(client, plan.config, run.scope, run);
        const shared = await fleet.deployShared({
          mode: gate.mode,
          mayBind: gate.mayBind,
          namespace: gate.namespace,
        });
        return runNodes(fleet, shared, gate.nodes, run, {
          ...o,
          format: options.format,
          nodeTimeoutMs: options.nodeTimeoutMs,
          parallelism,
          cancel,
        });
      },
    },
  );
  return {
    runId: run.runId,
    nodes: run.value,
    report: fleetReport(
      run.runId,
      run.value.map((r) => r.record),
    ),
    receipt: run.receipt,
  };
}

type FleetPlan = AgentRunPlan & { config: AgentRunConfig };

interface FleetGate {
  mode: ServiceAccountMode;
  mayBind: boolean;
  namespace: KubeObject | undefined;
  nodes: string[];
}

/** The gate: read-only, all at once. The node list is the fleet; its failure is the run's. */
async function gateFleet(
  o: ResolvedSnapshotOptions,
  options: FleetSnapshotOptions,
  plan: FleetPlan,
  selector: string,
  { client, log, signal }: OpenRun,
): Promise<FleetGate> {
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
          plan.config.identity.runId,
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
      dryRunPod: (mode) => dryRunPod(plan.config, plan, mode),
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
  const namespace = await namespaceRead;
  return {
    mode: gate.mode,
    mayBind: gate.mayBind,
    namespace: namespace instanceof Error ? undefined : (namespace as KubeObject),
    nodes,
  };
}

function dryRunPod(config: AgentRunConfig, plan: AgentRunPlan, mode: ServiceAccountMode): KubeObject {
  const { job } = buildNodeJob(
    config,
    plan,
    { serviceAccountName: mode.kind === "exact" ? mode.name : "default", owner: undefined },
    "node",
    0,
  );
  return podOfJob(job, config.namespace);
}

type RunNodesOptions = ResolvedSnapshotOptions & {
  format?: "yaml" | "json" | undefined;
  nodeTimeoutMs?: number | undefined;
  parallelism: number;
  /** The caller's cancel: a cancelled fleet ends without a report; a deadline records each node. */
  cancel: AbortSignal;
};

/** The two run-wide watches, the bounded Job creates, each node's wait and read; progress on one line. */
async function runNodes(
  fleet: FleetRun,
  shared: FleetShared,
  nodes: string[],
  run: OpenRun,
  o: RunNodesOptions,
): Promise<FleetNodeResult[]> {
  const { client, log, signal, progress } = run;
  const runId = run.identity.runId;
  const dispatcher = new FleetDispatcher();
  const watches = new AbortController();
  const watchSignal = AbortSignal.any([signal, watches.signal]);
  const list = { namespace: o.namespace, labelSelector: runPodSelector(runId) };
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
    watchUntil<JobObject, never>({
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
  const line = () => formatFleetProgress(counts, progress.elapsedMs());
  progress.wait(line);
  const one = async (node: string, index: number): Promise<FleetNodeResult> => {
    const started = new Date();
    counts.running++;
    let job: NodeJob | undefined;
    const jobName = () => job?.job ?? fleetNodeNames({ runId, jobPrefix: o.jobPrefix }, index).job;
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
      // Past the run's deadline no node starts: it is recorded with the deadline's TIMEOUT.
      signal.throwIfAborted();
      job = await fleet.createNodeJob(shared, node, index);
      const mine = job;
      const end = await awaitNodeEnd(dispatcher, mine, {
        runId,
        namespace: o.namespace,
        nodeTimeoutMs: o.nodeTimeoutMs,
        image: o.image,
        placement,
        signal,
        read: () => fleet.readNodeResult(mine),
        parse: (cm) => {
          const content = fleet.nodeResultContent(mine, cm);
          const document = parseSnapshot(content, `node ${node}'s snapshot`, {
            native: true,
            onEnvelopeMissing: () => {},
          });
          return { document, content };
        },
      });
      fleet.confirmNodeResult(mine, end.cm);
      const { content, document: parsed } = end;
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
      if (o.cancel.aborted) throw o.cancel.reason;
      counts.failed++;
      const e = isAicrError(err) ? err : toAicrError(err, `node ${node}`, client.server);
      log.warn(`node ${node} failed: ${errorMessage(e)}`, { code: e.code, job: jobName() });
      return { record: record({ status: "failed", error: { code: e.code, message: errorMessage(e) } }) };
    } finally {
      counts.running--;
      progress.refresh();
    }
  };
  try {
    return await mapLimit(nodes, o.parallelism, one, o.cancel);
  } finally {
    watches.abort();
    progress.phase(line());
  }
}

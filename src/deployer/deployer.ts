import type { Writable } from "node:stream";
import type { Logger } from "../core/log.ts";
import type { KubeClient, KubeObject, KubernetesObject } from "../kube/client.ts";
import { watchUntil } from "../kube/watch-until.ts";
import type { OwnerRef } from "../rbac/objects.ts";
import type { RunIdentity } from "../run/labels.ts";
import { type RunNames, runNames } from "../run/names.ts";
import { ensureNamespace } from "../run/namespace.ts";
import type { RunScope } from "../run/scope.ts";
import type { Snapshot } from "../snapshot/schema.ts";
import { createRunRbac } from "./_run-rbac.ts";
import { checkRuntimeClass } from "./_runtime-class.ts";
import { buildAgentJob, type PodSettings } from "./job-spec.ts";
import { pickOwnedPod } from "./pod-select.ts";
import {
  confirmResult,
  type ResultConfigMap,
  readResultConfigMap,
  readSnapshotConfigMap,
  resultContent,
  SNAPSHOT_KEY,
} from "./result.ts";
import { awaitRunEnd, type RunEnd } from "./run-end.ts";
import { resolveServiceAccountMode, type ServiceAccountMode } from "./service-account-mode.ts";
import {
  type AgentExit,
  type JobOutcome,
  type PodState,
  waitForJob,
  waitForStartedPod,
  watchRunPods,
} from "./wait.ts";

export interface AgentRunConfig extends PodSettings {
  namespace: string;
  identity: RunIdentity;
  /** The run labels (the run's pipeline made them from its identity). */
  labels: Readonly<Record<string, string>>;
  /** --job-name: a prefix. */
  jobPrefix?: string | undefined;
  /** --service-account-name: exact if such a ServiceAccount exists, else a prefix; unset is never probed. */
  serviceAccountName?: string | undefined;
  /** A delivered cm:// target (the user's; never deleted). Absent → the run's own staging ConfigMap. */
  delivered?: { namespace: string; name: string } | undefined;
}

/** Everything decided before the first request: names are validated here, so bad input writes nothing. */
export interface AgentRunPlan {
  names: RunNames;
  labels: Record<string, string>;
  output: { namespace: string; name: string };
  ownsOutput: boolean;
}

export function planAgentRun(config: AgentRunConfig): AgentRunPlan {
  const names = runNames({
    runId: config.identity.runId,
    jobPrefix: config.jobPrefix,
    serviceAccountPrefix: config.serviceAccountName,
  });
  const output = config.delivered ?? { namespace: config.namespace, name: names.stagingConfigMap };
  return { names, labels: { ...config.labels }, output, ownsOutput: !config.delivered };
}

export interface RunWaits {
  /** The Job's pod, its container started (its log can be read). */
  pod: Promise<PodState>;
  /** The Job's pod, its container terminated (run-end.ts). */
  exit: Promise<AgentExit>;
  /** The Job's condition. */
  completion: Promise<JobOutcome>;
  /** The first write of the output since the Job's create. */
  written: Promise<ResultConfigMap>;
  /** Every write seen so far, oldest first (the last few). */
  writes: () => readonly ResultConfigMap[];
}

/** Writes of the output kept for the proof: a twin writing the same delivered target adds a few at most. */
const WRITES_KEPT = 8;

/** The Job as its create answered (adopted after a lost answer: no resourceVersion). */
export interface DeployedJob {
  uid: string;
  /** The create's own resourceVersion; undefined for an adopted Job (read later, after its pods). */
  resourceVersion: string | undefined;
}

/** Where the run's waits start: opened while the Job's create is in flight (see deploy). */
export interface Watchable {
  /**
   * A resourceVersion answered before the Job's create was sent, so nothing the waits look for (the
   * Job's pods, its end, the agent's write) can predate it; undefined → list first.
   */
  watchFrom: string | undefined;
  /** Settles with the Job's create; the waits hold their events until then. */
  job: Promise<DeployedJob>;
}

/** What deploy() did: the value every later step reads (nothing mutable is read across calls). */
export interface Deployment extends DeployedJob {
  mode: ServiceAccountMode;
  watchFrom: string | undefined;
}

export interface DeployOptions {
  /** Already resolved (by the gate): not probed again. */
  mode?: ServiceAccountMode | undefined;
  /** The namespace as this invocation just read it: not read again. */
  namespace?: KubeObject | undefined;
  /**
   * Called once the run's waits can be opened: in prefix mode just before the Job's create is sent
   * (so the watches are open by the time it is answered), else right after it.
   */
  onWatchable?: ((w: Watchable) => void) | undefined;
  /**
   * The caller may bind any Role (the gate found a cluster-admin): the RoleBinding can go out with its
   * Role. Otherwise it waits for the Role, which the apiserver reads to check the binding.
   */
  mayBind?: boolean | undefined;
}

/** The run's shared objects: its ServiceAccount (made by the run, or the user's) and the RBAC anchor. */
export interface RunShared {
  serviceAccountName: string;
  owner: OwnerRef | undefined;
  /** A resourceVersion answered before the first Job's create: the run's watches start there. */
  watchFrom: string | undefined;
}

/**
 * What a node's run and a fleet's run deploy alike: the plan (names checked before any request), the
 * journalled create, and the run's shared objects — the RuntimeClass checked, the namespace ensured,
 * then the run's RBAC (anchor first, the rest owned by it) or an existing ServiceAccount as it is.
 */
export class RunDeployer {
  readonly plan: AgentRunPlan;

  constructor(
    protected readonly client: KubeClient,
    protected readonly config: AgentRunConfig,
    protected readonly scope: RunScope,
    protected readonly ctx: { log: Logger; signal: AbortSignal },
  ) {
    this.plan = planAgentRun(config);
  }

  protected create(o: KubernetesObject): Promise<KubeObject> {
    return this.scope.create(o, this.ctx.signal);
  }

  /** The run's shared objects; `mode` read-only-probed first when the gate did not resolve it. */
  async deployShared(o: DeployOptions = {}): Promise<RunShared & { mode: ServiceAccountMode }> {
    const { client, config } = this;
    if (config.runtimeClassName) await checkRuntimeClass(client, config.runtimeClassName);
    // The mode is a read-only probe; it comes before the first write so a refusal writes nothing.
    const mode =
      o.mode ??
      (await resolveServiceAccountMode(client, {
        namespace: config.namespace,
        name: config.serviceAccountName,
      }));
    const namespace = ensureNamespace(client, {
      namespace: config.namespace,
      known: o.namespace,
      log: this.ctx.log,
      signal: this.ctx.signal,
    });
    if (mode.kind !== "prefix") {
      this.ctx.log.info(
        `using the existing ServiceAccount ${config.namespace}/${mode.name}: aicr creates and deletes no RBAC for this run`,
        { hint: "grant it the agent's rules once with: aicr render-rbac <name> -n <namespace>" },
      );
      await namespace;
      return { mode, serviceAccountName: mode.name, owner: undefined, watchFrom: undefined };
    }
    // The ClusterRole is the run's anchor: deleting it (cleanup, an operator, after a SIGKILL) collects the rest.
    const { names, labels } = this.plan;
    const rbac = await createRunRbac(
      (obj) => this.create(obj),
      { names, namespace: config.namespace, labels },
      {
        discoverNetwork: Boolean(config.discoverNetwork),
        mayBind: Boolean(o.mayBind),
        namespaceReady: namespace,
      },
    );
    // watchFrom was answered before the Job's create is sent: a resourceVersion that precedes the Job.
    return { ...rbac, mode };
  }
}

/**
 * One run of the agent: deploy → pod → logs → completion → result. Its objects are journalled in the
 * run's scope (run/scope.ts), which cleans them up. It owns and selects only its own objects.
 */
export class AgentRun extends RunDeployer {
  /** Creates the run's objects; the scope cleans up on failure too. */
  async deploy(options: DeployOptions = {}): Promise<Deployment> {
    const { config } = this;
    const { names, labels } = this.plan;
    const { mode, serviceAccountName, owner, watchFrom: early } = await this.deployShared(options);
    let watchFrom = early;
    const job = buildAgentJob({
      ...config,
      names,
      labels,
      runId: config.identity.runId,
      serviceAccountName,
      output: `cm://${this.plan.output.namespace}/${this.plan.output.name}`,
      outputIsStaging: this.plan.ownsOutput,
      owner,
    });
    const created = Promise.withResolvers<DeployedJob>();
    created.promise.catch(() => {});
    if (early !== undefined) options.onWatchable?.({ watchFrom: early, job: created.promise });
    let deployed: DeployedJob;
    try {
      const made = await this.create(job);
      // Only a create's own answer dates the Job's birth; an adopted Job was read later, after its pods.
      const adopted = this.scope.created.find("Job")?.adopted;
      deployed = {
        uid: made.metadata?.uid ?? "",
        resourceVersion: adopted ? undefined : made.metadata?.resourceVersion,
      };
      created.resolve(deployed);
    } catch (err) {
      created.reject(err);
      throw err;
    }
    watchFrom ??= deployed.resourceVersion;
    this.ctx.log.info(`deployed Job ${config.namespace}/${names.job}`, { uid: deployed.uid });
    if (early === undefined) options.onWatchable?.({ watchFrom, job: created.promise });
    return { ...deployed, mode, watchFrom };
  }

  /**
   * The run's three waits, opened together (see deploy's onWatchable): its started pod, its Job's
   * end and the agent's write. Each ends with an answer or with `signal` (the run's deadline); none
   * is left unhandled.
   */
  openWaits(w: Watchable, signal: AbortSignal, onPending?: (pod: PodState) => void): RunWaits {
    const { job: _, ...bound } = this.bind(w, signal);
    const pods = watchRunPods(this.client, {
      ...bound,
      namespace: this.config.namespace,
      runId: this.config.identity.runId,
      onPending,
    });
    const writes: ResultConfigMap[] = [];
    const written = this.watchResult(w, signal, (cm) => {
      // A list after a cut watch shows the same write again.
      if (writes.some((x) => x.metadata?.resourceVersion === cm.metadata?.resourceVersion)) return;
      writes.push(cm);
      if (writes.length > WRITES_KEPT) writes.shift();
    });
    const waits: RunWaits = {
      pod: pods.started,
      exit: pods.exit,
      completion: this.waitForCompletion(w, signal),
      written,
      writes: () => writes,
    };
    for (const p of [waits.pod, waits.exit, waits.completion, waits.written]) p.catch(() => {});
    return waits;
  }

  /** The Job's UID and create resourceVersion, read by a wait's checks once `ready` has settled. */
  private bind(w: Watchable, signal: AbortSignal) {
    let job: DeployedJob | undefined;
    const ready = w.job.then((j) => (job = j));
    return {
      ready,
      job: () => job,
      uid: () => job?.uid ?? "",
      resourceVersion: w.watchFrom,
      signal: AbortSignal.any([this.ctx.signal, signal]),
    };
  }

  /** A pod owned by the run's Job (controller ownerReference to its UID) whose container started. */
  waitForPod(w: Watchable, signal: AbortSignal, onPending?: (pod: PodState) => void): Promise<PodState> {
    const { job: _, ...bound } = this.bind(w, signal);
    return waitForStartedPod(this.client, {
      ...bound,
      namespace: this.config.namespace,
      runId: this.config.identity.runId,
      onPending,
    });
  }

  /** The run's Job (by name and UID) completing or failing. */
  waitForCompletion(w: Watchable, signal: AbortSignal): Promise<JobOutcome> {
    const { job: _, ...bound } = this.bind(w, signal);
    return waitForJob(this.client, { ...bound, namespace: this.config.namespace, name: this.plan.names.job });
  }

  /**
   * The agent's write of the output ConfigMap, as a watch event from the Job's resourceVersion (so it
   * needs no read afterwards). Resolves with the first written object; with `onWrite`, the watch goes
   * on (until `signal`) and every write is told.
   */
  watchResult(
    w: Watchable,
    signal: AbortSignal,
    onWrite?: (cm: ResultConfigMap) => void,
  ): Promise<ResultConfigMap> {
    const bound = this.bind(w, signal);
    const first = Promise.withResolvers<ResultConfigMap>();
    const watch = watchUntil<ResultConfigMap, ResultConfigMap>({
      client: this.client,
      apiVersion: "v1",
      kind: "ConfigMap",
      plural: "configmaps",
      list: {
        namespace: this.plan.output.namespace,
        fieldSelector: `metadata.name=${this.plan.output.name}`,
      },
      resourceVersion: w.watchFrom,
      ready: bound.ready,
      signal: bound.signal,
      // A list (after a watch ended) may show an older delivered copy: only a newer write counts.
      check: (cm, type) => {
        if (
          type === "DELETED" ||
          !isNewer(cm, bound.job()?.resourceVersion) ||
          cm.data?.[SNAPSHOT_KEY] === undefined
        )
          return undefined;
        first.resolve(cm);
        if (!onWrite) return cm;
        onWrite(cm);
        return undefined;
      },
    });
    watch.catch(first.reject);
    return first.promise;
  }

  /** Follows the log of this run's own pod until it ends. */
  streamLogs(pod: PodState, out: Writable, signal: AbortSignal): Promise<void> {
    return this.client.followLog(
      { namespace: this.config.namespace, pod: pod.metadata.name, container: "aicr" },
      { out, signal, follow: true },
    );
  }

  /** The last pod owned by the Job, Failed included: for the agent's log and where a run stood. */
  async lastPod(jobUid: string): Promise<PodState | undefined> {
    const pods = await this.client.list<PodState>("v1", "Pod", {
      namespace: this.config.namespace,
      labelSelector: `aicr.run/run-id=${this.config.identity.runId}`,
    });
    return pickOwnedPod(pods.items, jobUid, { includeFailed: true });
  }

  /**
   * The run's end from its waits (run-end.ts): the agent's exit and its proven write, the Job's
   * condition as the fallback. `parse` reads a written document.
   */
  awaitEnd(waits: RunWaits, jobUid: string, parse: (cm: ResultConfigMap) => Snapshot): Promise<RunEnd> {
    const output = this.plan.output;
    return awaitRunEnd({
      run: () => ({ runId: this.config.identity.runId, jobUid }),
      exit: waits.exit,
      completion: waits.completion,
      writes: waits.writes,
      read: () => readResultConfigMap(this.client, output),
      parse: (cm) => ({ document: parse(cm), content: resultContent(cm, output) }),
      output: `${output.namespace}/${output.name}`,
    });
  }

  /** The agent's document in a result ConfigMap. */
  resultContent(cm: ResultConfigMap): string {
    return resultContent(cm, this.plan.output);
  }

  /** The result, journalled with its UID when the run owns it (its staging ConfigMap). */
  confirmResult(cm: ResultConfigMap): void {
    if (this.plan.ownsOutput) confirmResult(this.scope.created, cm, this.plan.output);
  }

  /** The result's bytes: from the watched object when there is one, else read now. */
  readResult(seen?: ResultConfigMap): Promise<string> {
    return readSnapshotConfigMap(this.client, {
      ...this.plan.output,
      owned: this.plan.ownsOutput,
      created: this.scope.created,
      seen,
    });
  }
}

/** resourceVersions are opaque in general, but one apiserver's are ordered integers (etcd revisions). */
function isNewer(obj: { metadata?: { resourceVersion?: string } }, than: string | undefined): boolean {
  const rv = Number(obj.metadata?.resourceVersion);
  const base = Number(than);
  return !Number.isFinite(rv) || !Number.isFinite(base) || rv > base;
}

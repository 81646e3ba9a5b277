import type { Writable } from "node:stream";
import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient, KubeObject, KubernetesObject } from "../kube/client.ts";
import { watchUntil } from "../kube/watch-until.ts";
import { type CleanupOptions, cleanupRun, type ReceiptRow } from "../run/cleanup.ts";
import { createAllBindingsLast, createOwned, settleAll } from "../run/create-owned.ts";
import { CreatedSet } from "../run/created-set.ts";
import { type RunIdentity, runLabels } from "../run/labels.ts";
import { type RunNames, runNames } from "../run/names.ts";
import { ensureNamespace } from "../run/namespace.ts";
import { buildAgentJob, type PodSettings } from "./job-spec.ts";
import { pickOwnedPod } from "./pod-select.ts";
import {
  buildClusterRole,
  buildClusterRoleBinding,
  buildRole,
  buildRoleBinding,
  buildServiceAccount,
  type OwnerRef,
} from "./rbac-objects.ts";
import { type ResultConfigMap, readSnapshotConfigMap, SNAPSHOT_KEY } from "./result.ts";
import { checkRuntimeClass } from "./runtime-class.ts";
import { resolveServiceAccountMode, type ServiceAccountMode } from "./service-account-mode.ts";
import { describePodState, type JobOutcome, type PodState, waitForJob, waitForStartedPod } from "./wait.ts";

export interface AgentRunConfig extends PodSettings {
  namespace: string;
  identity: RunIdentity;
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
  return { names, labels: runLabels(config.identity), output, ownsOutput: !config.delivered };
}

const RBAC = "rbac.authorization.k8s.io/v1";

export interface RunWaits {
  pod: Promise<PodState>;
  completion: Promise<JobOutcome>;
  written: Promise<ResultConfigMap>;
}

export interface DeployOptions {
  /** Already resolved (by the gate): not probed again. */
  mode?: ServiceAccountMode | undefined;
  /** The namespace as this invocation just read it: not read again. */
  namespace?: KubeObject | undefined;
  /** See AgentRun.deploy. */
  onWatchable?: (() => void) | undefined;
  /**
   * The caller may bind any Role (the gate found a cluster-admin): the RoleBinding can go out with its
   * Role. Otherwise it waits for the Role, which the apiserver reads to check the binding.
   */
  mayBind?: boolean | undefined;
}

/**
 * One run of the agent: deploy → pod → logs → completion → result → cleanup. One instance per
 * invocation; it owns and selects only its own objects.
 */
export class AgentRun {
  readonly created = new CreatedSet();
  readonly plan: AgentRunPlan;
  mode: ServiceAccountMode | undefined;
  jobUid: string | undefined;
  /** The Job create's own resourceVersion (undefined when the Job was adopted after a lost answer). */
  jobResourceVersion: string | undefined;
  /**
   * Waits watch from here, with no list: a resourceVersion answered before the Job's create was sent,
   * so nothing they look for (the Job's pods, its end, the agent's write) can predate it.
   */
  watchFrom: string | undefined;
  private names: RunNames;
  /** Settles with the Job's create: waits opened before it hold their events until then. */
  private readonly jobCreated = Promise.withResolvers<void>();

  constructor(
    private readonly client: KubeClient,
    private readonly config: AgentRunConfig,
    private readonly ctx: { log: Logger; signal: AbortSignal },
  ) {
    this.plan = planAgentRun(config);
    this.names = this.plan.names;
    this.jobCreated.promise.catch(() => {});
  }

  private createOptions() {
    return {
      client: this.client,
      created: this.created,
      identity: this.config.identity,
      log: this.ctx.log,
      signal: this.ctx.signal,
    };
  }

  /**
   * Creates the run's objects. The caller registers cleanup before calling this: it runs on failure too.
   * `onWatchable` is called once the run's waits can be opened: in prefix mode just before the Job's
   * create is sent (so the watches are open by the time it is answered), else right after it.
   */
  async deploy(options: DeployOptions = {}): Promise<void> {
    try {
      await this.createObjects(options);
      this.jobCreated.resolve();
    } catch (err) {
      this.jobCreated.reject(err);
      throw err;
    }
  }

  private async createObjects(options: DeployOptions) {
    const { client, config } = this;
    if (config.runtimeClassName) await checkRuntimeClass(client, config.runtimeClassName);
    // The mode is a read-only probe; it comes before the first write so a refusal writes nothing.
    this.mode =
      options.mode ??
      (await resolveServiceAccountMode(client, {
        namespace: config.namespace,
        name: config.serviceAccountName,
      }));
    const namespace = ensureNamespace(client, {
      namespace: config.namespace,
      known: options.namespace,
      log: this.ctx.log,
      signal: this.ctx.signal,
    });
    const meta = { names: this.names, namespace: config.namespace, labels: this.plan.labels };
    let owner: OwnerRef | undefined;
    let serviceAccountName: string;
    if (this.mode.mode === "prefix") {
      // The ClusterRole is the run's anchor: deleting it (cleanup, an operator, after a SIGKILL) collects the rest.
      // Cluster-scoped, so it goes out alongside the namespace ensure.
      const anchorCreate = createOwned(
        buildClusterRole({ ...meta, discoverNetwork: Boolean(config.discoverNetwork) }),
        this.createOptions(),
      );
      await settleAll([anchorCreate, namespace]);
      const anchor = await anchorCreate;
      owner = {
        apiVersion: RBAC,
        kind: "ClusterRole",
        name: this.names.clusterRole,
        uid: anchor.metadata?.uid ?? "",
      };
      const withOwner = { ...meta, owner };
      const create = (o: KubernetesObject) => createOwned(o, this.createOptions());
      const serviceAccount = create(buildServiceAccount(withOwner));
      await settleAll([
        create(buildClusterRoleBinding(withOwner)),
        serviceAccount,
        ...createAllBindingsLast(
          [buildRole(withOwner), buildRoleBinding(withOwner)],
          create,
          Boolean(options.mayBind),
        ),
      ]);
      serviceAccountName = this.names.serviceAccount;
      // Answered before the Job's create is sent: a resourceVersion that precedes the Job.
      this.watchFrom = (await serviceAccount).metadata?.resourceVersion;
    } else {
      this.ctx.log.info(
        `using the existing ServiceAccount ${config.namespace}/${this.mode.name}: aicr creates and deletes no RBAC for this run`,
        {
          hint: "grant it the agent's rules once with: aicr render-rbac <name> -n <namespace>",
        },
      );
      serviceAccountName = this.mode.name;
      await namespace;
    }
    const job = buildAgentJob({
      ...config,
      names: this.names,
      labels: this.plan.labels,
      runId: config.identity.runId,
      serviceAccountName,
      output: `cm://${this.plan.output.namespace}/${this.plan.output.name}`,
      outputIsStaging: this.plan.ownsOutput,
      owner,
    });
    const early = this.watchFrom !== undefined;
    if (early) options.onWatchable?.();
    const made = await createOwned(job, this.createOptions());
    this.jobUid = made.metadata?.uid;
    // Only a create's own answer dates the Job's birth; an adopted Job was read later, after its pods.
    this.jobResourceVersion = this.created.find("Job")?.adopted ? undefined : made.metadata?.resourceVersion;
    this.watchFrom ??= this.jobResourceVersion;
    this.ctx.log.info(`deployed Job ${config.namespace}/${this.names.job}`, { uid: this.jobUid });
    if (!early) options.onWatchable?.();
  }

  private requireJob(): string {
    if (!this.jobUid) throw new AicrError("INTERNAL", "the run's Job was not created");
    return this.jobUid;
  }

  waitForPod(timeoutMs: number, stop?: AbortSignal, onPending?: (pod: PodState) => void): Promise<PodState> {
    return waitForStartedPod(this.client, {
      namespace: this.config.namespace,
      runId: this.config.identity.runId,
      uid: () => this.requireJob(),
      ready: this.jobCreated.promise,
      timeoutMs,
      signal: stop ? AbortSignal.any([this.ctx.signal, stop]) : this.ctx.signal,
      onPending,
      resourceVersion: this.watchFrom,
    });
  }

  /**
   * The run's three waits, opened together (see deploy's onWatchable): its started pod, its Job's
   * end and the agent's write. Each settles on its own; none is left unhandled.
   */
  openWaits(timeoutMs: number, stop: AbortSignal, onPending?: (pod: PodState) => void): RunWaits {
    const waits: RunWaits = {
      pod: this.waitForPod(timeoutMs, stop, onPending),
      completion: this.waitForCompletion(timeoutMs, stop),
      written: this.watchResult(timeoutMs, stop),
    };
    for (const p of Object.values(waits)) p.catch(() => {});
    return waits;
  }

  /** Follows the log of this run's own pod until it ends. */
  streamLogs(pod: PodState, out: Writable): Promise<void> {
    return this.client.followLog(
      { namespace: this.config.namespace, pod: pod.metadata.name, container: "aicr" },
      { out, signal: this.ctx.signal, follow: true },
    );
  }

  async waitForCompletion(timeoutMs: number, stop?: AbortSignal): Promise<JobOutcome> {
    try {
      return await waitForJob(this.client, {
        namespace: this.config.namespace,
        name: this.names.job,
        uid: () => this.requireJob(),
        ready: this.jobCreated.promise,
        timeoutMs,
        signal: stop ? AbortSignal.any([this.ctx.signal, stop]) : this.ctx.signal,
        resourceVersion: this.watchFrom,
      });
    } catch (err) {
      if (!(err instanceof AicrError) || err.code !== "TIMEOUT") throw err;
      // A Job's timeout says little by itself; its pod's last state says why (unschedulable, image pull…).
      const pod = await this.lastPod().catch(() => undefined);
      throw new AicrError("TIMEOUT", `${err.message}: ${describePodState(pod)}`, {
        context: err.context,
        cause: err,
      });
    }
  }

  /** The last owned pod, Failed included: for showing the agent's log when the run failed. */
  async lastPod(): Promise<PodState | undefined> {
    const pods = await this.client.list<PodState>("v1", "Pod", {
      namespace: this.config.namespace,
      labelSelector: `aicr.run/run-id=${this.config.identity.runId}`,
    });
    return pickOwnedPod(pods.items, this.requireJob(), { includeFailed: true });
  }

  /**
   * Watches the output ConfigMap from the Job's resourceVersion, so the agent's write arrives as an
   * event while the run waits and needs no read afterwards. Resolves with the written object.
   */
  watchResult(timeoutMs: number, signal: AbortSignal): Promise<ResultConfigMap> {
    return watchUntil<ResultConfigMap, ResultConfigMap>({
      client: this.client,
      apiVersion: "v1",
      kind: "ConfigMap",
      plural: "configmaps",
      list: {
        namespace: this.plan.output.namespace,
        fieldSelector: `metadata.name=${this.plan.output.name}`,
      },
      resourceVersion: this.watchFrom,
      ready: this.jobCreated.promise,
      signal: AbortSignal.any([this.ctx.signal, signal]),
      timeoutMs,
      // A list (after a watch ended) may show an older delivered copy: only a newer write counts.
      check: (cm, type) =>
        type !== "DELETED" && isNewer(cm, this.jobResourceVersion) && cm.data?.[SNAPSHOT_KEY] !== undefined
          ? cm
          : undefined,
      describeTimeout: () =>
        `ConfigMap ${this.plan.output.namespace}/${this.plan.output.name} was not written`,
    });
  }

  /** The result's bytes: from the watched object when there is one, else read now. */
  readResult(seen?: ResultConfigMap): Promise<string> {
    return readSnapshotConfigMap(this.client, {
      ...this.plan.output,
      owned: this.plan.ownsOutput,
      created: this.created,
      seen,
    });
  }

  cleanup(): Promise<ReceiptRow[]> {
    const options: CleanupOptions = {
      client: this.client,
      created: this.created,
      identity: this.config.identity,
      log: this.ctx.log,
      staging: this.plan.ownsOutput ? this.plan.output : undefined,
    };
    return cleanupRun(options);
  }
}

/** resourceVersions are opaque in general, but one apiserver's are ordered integers (etcd revisions). */
function isNewer(obj: { metadata?: { resourceVersion?: string } }, than: string | undefined): boolean {
  const rv = Number(obj.metadata?.resourceVersion);
  const base = Number(than);
  return !Number.isFinite(rv) || !Number.isFinite(base) || rv > base;
}

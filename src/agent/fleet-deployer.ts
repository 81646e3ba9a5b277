import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient, KubeObject, KubernetesObject } from "../kube/client.ts";
import { isNotFound } from "../kube/errors.ts";
import type { OwnerRef } from "../rbac/objects.ts";
import { ownerUids } from "../run/created-set.ts";
import { fleetNodeNames } from "../run/names.ts";
import { ensureNamespace } from "../run/namespace.ts";
import type { RunScope } from "../run/scope.ts";
import { createRunRbac } from "./_run-rbac.ts";
import { checkRuntimeClass } from "./_runtime-class.ts";
import { type AgentRunConfig, type AgentRunPlan, planAgentRun } from "./deployer.ts";
import { buildAgentJob } from "./job-spec.ts";
import { SNAPSHOT_KEY } from "./result.ts";
import type { ServiceAccountMode } from "./service-account-mode.ts";

export const HOSTNAME_LABEL = "kubernetes.io/hostname";

/** The run's shared objects, created once for every node's Job. */
export interface FleetShared {
  serviceAccountName: string;
  owner: OwnerRef | undefined;
  /** A resourceVersion answered before the first Job's create: the run-wide watches start there. */
  watchFrom: string | undefined;
}

export interface NodeJob {
  node: string;
  index: number;
  job: string;
  staging: string;
  uid: string;
}

/** The agent Job of one node: the run's Job, pinned by required node affinity on the hostname label. */
export function buildNodeJob(
  config: AgentRunConfig,
  plan: AgentRunPlan,
  shared: Pick<FleetShared, "serviceAccountName" | "owner">,
  node: string,
  index: number,
) {
  const mine = fleetNodeNames(
    {
      runId: config.identity.runId,
      jobPrefix: config.jobPrefix,
      serviceAccountPrefix: config.serviceAccountName,
    },
    index,
  );
  const job = buildAgentJob({
    ...config,
    names: { ...plan.names, job: mine.job, stagingConfigMap: mine.stagingConfigMap },
    labels: plan.labels,
    runId: config.identity.runId,
    serviceAccountName: shared.serviceAccountName,
    output: `cm://${config.namespace}/${mine.stagingConfigMap}`,
    outputIsStaging: true,
    owner: shared.owner,
  });
  const affinity = {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: HOSTNAME_LABEL, operator: "In", values: [node] }] }],
      },
    },
  };
  return {
    names: mine,
    job: {
      ...job,
      spec: {
        ...job.spec,
        template: { ...job.spec.template, spec: { ...job.spec.template.spec, affinity } },
      },
    },
  };
}

/**
 * A fleet run's deployer: the run's RBAC once (the anchor ClusterRole first, everything else owned by
 * it), or an existing ServiceAccount; then one Job per node, each journalled in the run scope.
 */
export class FleetRun {
  readonly plan: AgentRunPlan;

  constructor(
    private readonly client: KubeClient,
    private readonly config: AgentRunConfig,
    private readonly scope: RunScope,
    private readonly ctx: { log: Logger; signal: AbortSignal },
  ) {
    this.plan = planAgentRun(config);
  }

  private create(o: KubernetesObject): Promise<KubeObject> {
    return this.scope.create(o, this.ctx.signal);
  }

  async deployShared(o: {
    mode: ServiceAccountMode;
    mayBind: boolean;
    namespace?: KubeObject | undefined;
  }): Promise<FleetShared> {
    const { client, config } = this;
    const { names, labels } = this.plan;
    if (config.runtimeClassName) await checkRuntimeClass(client, config.runtimeClassName);
    const namespace = ensureNamespace(client, {
      namespace: config.namespace,
      known: o.namespace,
      log: this.ctx.log,
      signal: this.ctx.signal,
    });
    if (o.mode.kind !== "prefix") {
      await namespace;
      this.ctx.log.info(
        `using the existing ServiceAccount ${config.namespace}/${o.mode.name}: aicr creates and deletes no RBAC for this run`,
      );
      return { serviceAccountName: o.mode.name, owner: undefined, watchFrom: undefined };
    }
    const meta = { names, namespace: config.namespace, labels };
    return createRunRbac((obj) => this.create(obj), meta, {
      discoverNetwork: Boolean(config.discoverNetwork),
      mayBind: o.mayBind,
      namespaceReady: namespace,
    });
  }

  /** One node's Job, created under the run (journalled before the request, UID after). */
  async createNodeJob(shared: FleetShared, node: string, index: number): Promise<NodeJob> {
    const built = buildNodeJob(this.config, this.plan, shared, node, index);
    const made = await this.create(built.job);
    return {
      node,
      index,
      job: built.names.job,
      staging: built.names.stagingConfigMap,
      uid: made.metadata?.uid ?? "",
    };
  }

  /**
   * A finished node's snapshot: its staging ConfigMap, read once. Journalled for cleanup only when its
   * controller is that node's Job (the agent owns it so); its bytes are returned unchanged.
   */
  async readNodeResult(job: NodeJob): Promise<string> {
    const ref = { apiVersion: "v1", kind: "ConfigMap", namespace: this.config.namespace, name: job.staging };
    let cm: KubeObject & { data?: Record<string, string> };
    try {
      cm = await this.client.get(ref);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      throw new AicrError(
        "NOT_FOUND",
        `the agent finished but ConfigMap ${ref.namespace}/${ref.name} does not exist`,
        {
          remedy: "the agent wrote no snapshot: check its pod's log",
        },
      );
    }
    const owners = ownerUids(cm);
    if (cm.metadata?.uid && owners?.includes(job.uid))
      this.scope.created.confirm(ref, cm.metadata.uid, owners);
    const content = cm.data?.[SNAPSHOT_KEY];
    if (content === undefined)
      throw new AicrError(
        "NOT_FOUND",
        `ConfigMap ${ref.namespace}/${ref.name} has no ${JSON.stringify(SNAPSHOT_KEY)} key`,
        {
          remedy: "the agent image may be of a different version; check its log and the ConfigMap's keys",
        },
      );
    return content;
  }
}

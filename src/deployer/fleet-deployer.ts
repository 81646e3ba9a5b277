import { AicrError } from "../core/errors.ts";
import type { KubeObject } from "../kube/client.ts";
import { isNotFound } from "../kube/errors.ts";
import { ownerUids } from "../run/created-set.ts";
import { fleetNodeNames } from "../run/names.ts";
import { type AgentRunConfig, type AgentRunPlan, RunDeployer, type RunShared } from "./deployer.ts";
import { buildAgentJob } from "./job-spec.ts";
import { SNAPSHOT_KEY } from "./result.ts";

export const HOSTNAME_LABEL = "kubernetes.io/hostname";

/** The run's shared objects, created once for every node's Job. */
export type FleetShared = RunShared;

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
export class FleetRun extends RunDeployer {
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

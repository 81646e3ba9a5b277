import { fleetNodeNames } from "../run/names.ts";
import { type AgentRunConfig, type AgentRunPlan, RunDeployer, type RunShared } from "./deployer.ts";
import { buildAgentJob } from "./job-spec.ts";
import { confirmResult, type ResultConfigMap, readResultConfigMap, resultContent } from "./result.ts";

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

  /** A node's staging ConfigMap, read now (a quorum read). */
  readNodeResult(job: NodeJob): Promise<ResultConfigMap> {
    return readResultConfigMap(this.client, { namespace: this.config.namespace, name: job.staging });
  }

  /** A node's document in its staging ConfigMap, bytes unchanged. */
  nodeResultContent(job: NodeJob, cm: ResultConfigMap): string {
    return resultContent(cm, { namespace: this.config.namespace, name: job.staging });
  }

  /** A node's proven result, journalled for cleanup only when its controller is that node's Job (the agent owns it so). */
  confirmNodeResult(job: NodeJob, cm: ResultConfigMap): void {
    confirmResult(this.scope.created, cm, {
      namespace: this.config.namespace,
      name: job.staging,
      owner: job.uid,
    });
  }
}

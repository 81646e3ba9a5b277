/**
 * gpu-operator-health (diagnostic): the GPU Operator's Deployment is available, its ClusterPolicy
 * reports `ready`, and the DCGM exporter DaemonSet has a ready pod. Never skips, creates nothing, writes
 * no evidence; every failing part is reported, not only the first.
 */
import type { ClusterPolicy } from "../../kube/types.ts";
import {
  CLUSTER_POLICY,
  DCGM_EXPORTER,
  GPU_OPERATOR_NS,
  OPERATOR_DEPLOYMENT,
  OPERATOR_LABEL,
} from "./_gpu-operator.ts";
import { type Outcome, readOutcome } from "./_read-outcome.ts";
import {
  daemonSetRef,
  deploymentAvailable,
  deploymentRef,
  getOptional,
  type WorkloadStatus,
} from "./_support.ts";
import { type CheckContext, type CheckRun, failed, passed, type Verdict } from "./context.ts";

export interface GpuOperatorReads {
  /** The Deployments in gpu-operator labelled app.kubernetes.io/name=gpu-operator. */
  labelled: Outcome<WorkloadStatus[]>;
  /** Deployment gpu-operator/gpu-operator, read only when the labelled list failed or was empty. */
  byName?: Outcome<WorkloadStatus> | undefined;
  clusterPolicy: Outcome<ClusterPolicy>;
  dcgmExporter: Outcome<WorkloadStatus>;
}

const available = (d: WorkloadStatus): string =>
  `${d.status?.availableReplicas ?? 0} of ${d.spec?.replicas ?? 1} available`;

/** The operator's part: its issue (undefined when healthy) and the line describing what was found. */
function operatorPart(r: GpuOperatorReads): { issue?: string; line: string } {
  if (r.labelled.state === "found" && r.labelled.value.length > 0) {
    const list = r.labelled.value;
    const line = `GPU Operator: ${list.map((d) => `Deployment ${GPU_OPERATOR_NS}/${d.metadata?.name} ${available(d)}`).join(", ")}`;
    return list.some(deploymentAvailable)
      ? { line }
      : {
          issue: `the GPU Operator Deployment has no available replica (${list.map((d) => `${d.metadata?.name}: ${available(d)}`).join(", ")})`,
          line,
        };
  }
  const ref = `Deployment ${GPU_OPERATOR_NS}/${OPERATOR_DEPLOYMENT}`;
  const byName = r.byName ?? { state: "absent" };
  if (byName.state === "error") return { issue: byName.message, line: `GPU Operator: ${byName.message}` };
  if (byName.state === "absent") {
    const listed =
      r.labelled.state === "error"
        ? `listing by label failed: ${r.labelled.message}`
        : `none labelled ${OPERATOR_LABEL}`;
    return {
      issue: `the GPU Operator is not installed: no ${ref} (${listed})`,
      line: `GPU Operator: not found in namespace ${GPU_OPERATOR_NS}`,
    };
  }
  const line = `GPU Operator: ${ref} ${available(byName.value)}`;
  return deploymentAvailable(byName.value)
    ? { line }
    : { issue: `${ref} has no available replica (${available(byName.value)})`, line };
}

function clusterPolicyPart(o: Outcome<ClusterPolicy>): { issue?: string; line: string } {
  const name = `ClusterPolicy ${CLUSTER_POLICY}`;
  if (o.state === "error") return { issue: o.message, line: `${name}: ${o.message}` };
  if (o.state === "absent") return { issue: `${name} not found`, line: `${name}: not found` };
  const state = o.value.status?.state;
  if (!state) return { issue: `${name} reports no status.state`, line: `${name}: no status.state` };
  const line = `${name}: state ${state}`;
  return state === "ready"
    ? { line }
    : { issue: `${name} is not ready: state ${state}, expected ready`, line };
}

function dcgmPart(o: Outcome<WorkloadStatus>): { issue?: string; line: string } {
  const name = `DaemonSet ${GPU_OPERATOR_NS}/${DCGM_EXPORTER}`;
  if (o.state === "error") return { issue: o.message, line: `${name}: ${o.message}` };
  if (o.state === "absent") return { issue: `${name} not found`, line: `${name}: not found` };
  const ready = o.value.status?.numberReady ?? 0;
  const desired = o.value.status?.desiredNumberScheduled ?? 0;
  const line = `${name}: ${ready} of ${desired} pod(s) ready`;
  return ready >= 1 ? { line } : { issue: `${name} has no ready pod (${ready} of ${desired} ready)`, line };
}

/** The verdict from the three reads (pure). */
export function gpuOperatorHealthVerdict(r: GpuOperatorReads): Verdict {
  const parts = [operatorPart(r), clusterPolicyPart(r.clusterPolicy), dcgmPart(r.dcgmExporter)];
  const details = parts.map((p) => p.line);
  const issues = parts.flatMap((p) => (p.issue ? [p.issue] : []));
  if (issues.length > 0) return failed(issues.join("; "), details);
  return passed(
    "the GPU Operator is available, ClusterPolicy cluster-policy is ready, the DCGM exporter has a ready pod",
    details,
  );
}

/** The reads the verdict needs; the Deployment by name only when the labelled list found none. */
export async function readGpuOperator(ctx: Pick<CheckContext, "client">): Promise<GpuOperatorReads> {
  const { client } = ctx;
  const [labelled, clusterPolicy, dcgmExporter] = await Promise.all([
    readOutcome(() =>
      client
        .list<WorkloadStatus>("apps/v1", "Deployment", {
          namespace: GPU_OPERATOR_NS,
          labelSelector: OPERATOR_LABEL,
        })
        .then((l) => l.items),
    ),
    readOutcome(() =>
      getOptional<ClusterPolicy>(client, {
        apiVersion: "nvidia.com/v1",
        kind: "ClusterPolicy",
        name: CLUSTER_POLICY,
      }),
    ),
    readOutcome(() => getOptional<WorkloadStatus>(client, daemonSetRef(GPU_OPERATOR_NS, DCGM_EXPORTER))),
  ]);
  const byName =
    labelled.state === "found" && labelled.value.length > 0
      ? undefined
      : await readOutcome(() =>
          getOptional<WorkloadStatus>(client, deploymentRef(GPU_OPERATOR_NS, OPERATOR_DEPLOYMENT)),
        );
  return { labelled, byName, clusterPolicy, dcgmExporter };
}

export const run: CheckRun = async (ctx) => gpuOperatorHealthVerdict(await readGpuOperator(ctx));

/** Pure builders of one validation run's objects; every name carries the run ID. */

import { jobDeadlineSeconds } from "../../deployer/job-spec.ts";
import type { V1ConfigMap } from "../../kube/types.ts";
import {
  type BuiltMeta,
  buildClusterRole,
  buildClusterRoleBinding,
  buildRole,
  buildRoleBinding,
  buildServiceAccount,
  type ClusterRole,
  type ClusterRoleBinding,
  type OwnerRef,
  objectMeta,
  type Role,
  type RoleBinding,
  type ServiceAccount,
  serviceAccountSubject,
} from "../../rbac/objects.ts";
import { nameWithRunId, VALIDATOR_PREFIX } from "../../run/names.ts";
import { VALIDATOR_CLUSTER_RULES, VALIDATOR_ENV } from "../_catalog.ts";
import type { PodPlacement } from "../options.ts";
import type { Phase } from "../recipe.ts";
import { GPU_RESOURCE } from "../validator/_checks.ts";

export const VALIDATION_COMPONENT = "validation";
export const PHASE_LABEL = "aicr.run/phase";
export const VALIDATOR_LABEL = "aicr.run/validator";
export const VALIDATOR_CONTAINER = "validator";
const TTL_SECONDS = 3600;

export interface ValidationNames {
  /** ServiceAccount, ClusterRole, ClusterRoleBinding, Role and RoleBinding. */
  rbac: string;
  snapshotConfigMap: string;
  recipeConfigMap: string;
}

export const validationNames = (runId: string): ValidationNames => ({
  rbac: nameWithRunId(VALIDATOR_PREFIX, runId),
  snapshotConfigMap: nameWithRunId("aicr-snapshot", runId),
  recipeConfigMap: nameWithRunId("aicr-recipe", runId),
});

/** `aicr-<check>-<runID>`, the check part cut so the whole fits 63 characters. */
export const checkJobName = (check: string, runId: string): string => nameWithRunId(`aicr-${check}`, runId);

export interface Ctx {
  names: ValidationNames;
  namespace: string;
  labels: Record<string, string>;
  /** --node-selector, --toleration, --image-pull-secret: on every validator pod. */
  placement?: PodPlacement | undefined;
}

/** `aicr-<check>-<n>-<runID>`: one Job per node of a per-node check. */
export const nodeCheckJobName = (check: string, index: number, runId: string): string =>
  nameWithRunId(`aicr-${check}-${index}`, runId);

/** Tolerated by a pod that holds a GPU: the taint GPU pools commonly carry (as ExtendedResourceToleration adds). */
const GPU_TOLERATION = { key: GPU_RESOURCE, operator: "Exists", effect: "NoSchedule" };

/** The anchor: only the read rules the built-in validators use. Deleting it collects the run. */
export const buildValidatorClusterRole = (c: Ctx): ClusterRole =>
  buildClusterRole(
    { name: c.names.rbac, labels: c.labels },
    VALIDATOR_CLUSTER_RULES.map((r) => ({ ...r })),
  );

type DataConfigMap = V1ConfigMap & { apiVersion: string; kind: string; metadata: BuiltMeta };

type SupportObject = ServiceAccount | ClusterRoleBinding | Role | RoleBinding | DataConfigMap;

/** Everything but the anchor and the Jobs, each owned by the anchor. */
export function buildSupportObjects(
  c: Ctx,
  owner: OwnerRef,
  data: { snapshot: string; recipe: string },
): SupportObject[] {
  const rbac = { name: c.names.rbac, namespace: c.namespace, labels: c.labels, owner };
  const subjects = [serviceAccountSubject({ namespace: c.namespace, name: c.names.rbac })];
  const cm = (name: string, key: string, text: string): DataConfigMap => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: objectMeta({ ...rbac, name }),
    data: { [key]: text },
  });
  return [
    buildServiceAccount(rbac),
    buildClusterRoleBinding(rbac, { clusterRole: c.names.rbac, subjects }),
    buildRole(rbac, [
      {
        apiGroups: [""],
        resources: ["configmaps"],
        verbs: ["get"],
        resourceNames: [c.names.snapshotConfigMap, c.names.recipeConfigMap],
      },
    ]),
    buildRoleBinding(rbac, { role: c.names.rbac, subjects }),
    cm(c.names.snapshotConfigMap, "snapshot.yaml", data.snapshot),
    cm(c.names.recipeConfigMap, "recipe.yaml", data.recipe),
  ];
}

export interface CheckJobInput {
  check: string;
  phase: Phase;
  runId: string;
  image: string;
  timeoutMs: number;
  owner: OwnerRef;
  /** A per-node check: its pod is bound to this node, holds one GPU, and is told the node's name. */
  node?: { name: string; index: number } | undefined;
}

const seccompProfile = { type: "RuntimeDefault" };

type EnvVar = {
  name: string;
  value?: string;
  valueFrom?: { fieldRef: { apiVersion: string; fieldPath: string } };
};

/** One validator Job: the binary's validator mode, PSS-restricted, reading its data through the API. */
export function buildCheckJob(c: Ctx, j: CheckJobInput) {
  const labels = { ...c.labels, [PHASE_LABEL]: j.phase, [VALIDATOR_LABEL]: j.check };
  const env: EnvVar[] = [
    { name: "AICR_RUN_ID", value: j.runId },
    { name: VALIDATOR_ENV.name, value: j.check },
    { name: VALIDATOR_ENV.phase, value: j.phase },
    {
      name: VALIDATOR_ENV.namespace,
      valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } },
    },
    { name: VALIDATOR_ENV.snapshotConfigMap, value: c.names.snapshotConfigMap },
    { name: VALIDATOR_ENV.recipeConfigMap, value: c.names.recipeConfigMap },
  ];
  const node = j.node;
  if (node)
    env.push(
      {
        name: VALIDATOR_ENV.nodeName,
        valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "spec.nodeName" } },
      },
      // The NVIDIA container toolkit mounts nvidia-smi into a container that asks for `utility`.
      { name: "NVIDIA_DRIVER_CAPABILITIES", value: "utility" },
    );
  const placement = c.placement;
  const tolerations = [...(placement?.tolerations ?? []), ...(node ? [GPU_TOLERATION] : [])];
  const resources = node
    ? {
        requests: { cpu: "100m", memory: "128Mi", [GPU_RESOURCE]: "1" },
        limits: { cpu: "500m", memory: "256Mi", [GPU_RESOURCE]: "1" },
      }
    : { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "500m", memory: "256Mi" } };
  const affinity = node
    ? {
        // Bound to its node by name, as a DaemonSet's pods are.
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchFields: [{ key: "metadata.name", operator: "In", values: [node.name] }] },
            ],
          },
        },
      }
    : {
        // Validators read the API only: keep them off GPU nodes when another node can take them.
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 100,
              preference: {
                matchExpressions: [{ key: "nvidia.com/gpu.present", operator: "DoesNotExist" }],
              },
            },
          ],
        },
      };
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      ...objectMeta({
        name: node ? nodeCheckJobName(j.check, node.index, j.runId) : checkJobName(j.check, j.runId),
        namespace: c.namespace,
        labels,
        owner: j.owner,
      }),
      labels,
    },
    spec: {
      backoffLimit: 0,
      ttlSecondsAfterFinished: TTL_SECONDS,
      // A backstop past the remote side's own wait, so the wait (and its TIMEOUT) always decides first.
      activeDeadlineSeconds: jobDeadlineSeconds(j.timeoutMs),
      template: {
        metadata: { labels: { ...labels } },
        spec: {
          serviceAccountName: c.names.rbac,
          affinity,
          ...(placement?.nodeSelector ? { nodeSelector: { ...placement.nodeSelector } } : {}),
          ...(tolerations.length > 0 ? { tolerations } : {}),
          ...(placement && placement.imagePullSecrets.length > 0
            ? { imagePullSecrets: placement.imagePullSecrets.map((name) => ({ name })) }
            : {}),
          restartPolicy: "Never",
          securityContext: { runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534, seccompProfile },
          containers: [
            {
              name: VALIDATOR_CONTAINER,
              image: j.image,
              command: ["aicr"],
              args: ["validator", j.check],
              env,
              terminationMessagePath: "/dev/termination-log",
              terminationMessagePolicy: "FallbackToLogsOnError",
              resources,
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ["ALL"] },
                seccompProfile,
              },
            },
          ],
        },
      },
    },
  };
}

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
import { VALIDATOR_CLUSTER_RULES, VALIDATOR_ENV, type ValidatorEntry } from "../_catalog.ts";
import type { PodPlacement } from "../options.ts";
import type { Phase, Recipe } from "../recipe.ts";
import { GPU_RESOURCE } from "../validator/_checks.ts";

export const VALIDATION_COMPONENT = "validation";
export const PHASE_LABEL = "aicr.run/phase";
export const VALIDATOR_LABEL = "aicr.run/validator";
export const VALIDATOR_CONTAINER = "validator";
const TTL_SECONDS = 3600;
/** An isolated check's Job outlives its own time limit by this much (the original waits as long). */
const CHECK_GRACE_MS = 30_000;

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
  /** The isolated checks' own ServiceAccounts: they read the data ConfigMaps too. */
  checkAccounts: readonly string[] = [],
): SupportObject[] {
  const rbac = { name: c.names.rbac, namespace: c.namespace, labels: c.labels, owner };
  const subjects = [serviceAccountSubject({ namespace: c.namespace, name: c.names.rbac })];
  const readers = [
    ...subjects,
    ...checkAccounts.map((name) => serviceAccountSubject({ namespace: c.namespace, name })),
  ];
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
    buildRoleBinding(rbac, { role: c.names.rbac, subjects: readers }),
    cm(c.names.snapshotConfigMap, "snapshot.yaml", data.snapshot),
    cm(c.names.recipeConfigMap, "recipe.yaml", data.recipe),
  ];
}

type Namespace = { apiVersion: "v1"; kind: "Namespace"; metadata: BuiltMeta };
type IdentityObject = Namespace | ServiceAccount | ClusterRole | ClusterRoleBinding | Role | RoleBinding;

/** The labels of everything one check's run makes: the run's, its phase and its name. */
export const checkLabels = (c: Ctx, check: string, phase: Phase): Record<string, string> => ({
  ...c.labels,
  [PHASE_LABEL]: phase,
  [VALIDATOR_LABEL]: check,
});

/**
 * An isolated check's own identity and namespace, all named `aicr-<check>-<runID>` and owned by the
 * anchor: the namespace its objects live in, its ServiceAccount (in the validation namespace), the
 * ClusterRole of its cluster-wide rules and the Role of its namespace rules, each bound to it alone.
 * The namespace comes first: its Role and RoleBinding live in it.
 */
export function buildCheckIdentity(
  c: Ctx,
  check: { entry: ValidatorEntry; runId: string; recipe: Recipe },
  owner: OwnerRef,
): { namespace: Namespace; rest: IdentityObject[] } {
  const { entry } = check;
  const name = checkJobName(entry.name, check.runId);
  const labels = checkLabels(c, entry.name, entry.phase);
  const subjects = [serviceAccountSubject({ namespace: c.namespace, name })];
  const clusterRules = entry.clusterRules?.(check.recipe) ?? [];
  const namespaceRules = entry.namespaceRules ?? [];
  const rest: IdentityObject[] = [buildServiceAccount({ name, namespace: c.namespace, labels, owner })];
  if (clusterRules.length > 0)
    rest.push(
      buildClusterRole({ name, labels, owner }, clusterRules),
      buildClusterRoleBinding({ name, labels, owner }, { clusterRole: name, subjects }),
    );
  if (namespaceRules.length > 0)
    rest.push(
      buildRole({ name, namespace: name, labels, owner }, namespaceRules),
      buildRoleBinding({ name, namespace: name, labels, owner }, { role: name, subjects }),
    );
  return {
    namespace: { apiVersion: "v1", kind: "Namespace", metadata: objectMeta({ name, labels, owner }) },
    rest,
  };
}

/** `aicr-ctrf-<runID>-<phase>`: one phase's CTRF report while the run lasts. */
export const phaseReportName = (runId: string, phase: Phase): string =>
  `${nameWithRunId("aicr-ctrf", runId)}-${phase}`;

export const REPORT_TYPE_LABEL = "aicr.run/report-type";

/** One phase's CTRF report as a ConfigMap, owned by the anchor (the run's cleanup deletes it). */
export function buildPhaseReport(
  c: Ctx,
  owner: OwnerRef,
  p: { phase: Phase; runId: string; ctrf: unknown },
): DataConfigMap {
  const labels = { ...c.labels, [PHASE_LABEL]: p.phase, [REPORT_TYPE_LABEL]: "ctrf" };
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: objectMeta({ name: phaseReportName(p.runId, p.phase), namespace: c.namespace, labels, owner }),
    data: { "report.json": `${JSON.stringify(p.ctrf, null, 2)}\n` },
  };
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
  /** An isolated check: its own ServiceAccount and namespace, its time limit, what its probes use. */
  isolated?:
    | {
        timeoutMs: number;
        ncclImage?: string | undefined;
        /** AICR_CHECK_WAIT_SCALE passed through (tests shorten a failing check's waits). */
        waitScale?: string | undefined;
      }
    | undefined;
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
  const isolated = j.isolated;
  if (isolated) {
    const own = checkJobName(j.check, j.runId);
    const probe = { nodeSelector: c.placement?.nodeSelector, tolerations: c.placement?.tolerations };
    env.push(
      { name: VALIDATOR_ENV.testNamespace, value: own },
      { name: VALIDATOR_ENV.probeImage, value: j.image },
      { name: VALIDATOR_ENV.checkTimeoutMs, value: String(isolated.timeoutMs) },
      { name: VALIDATOR_ENV.probePlacement, value: JSON.stringify(probe) },
      { name: VALIDATOR_ENV.labels, value: JSON.stringify(labels) },
      ...(isolated.ncclImage ? [{ name: VALIDATOR_ENV.ncclImage, value: isolated.ncclImage }] : []),
      ...(isolated.waitScale ? [{ name: VALIDATOR_ENV.waitScale, value: isolated.waitScale }] : []),
    );
  }
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
      activeDeadlineSeconds: jobDeadlineSeconds(
        isolated ? Math.min(j.timeoutMs, isolated.timeoutMs + CHECK_GRACE_MS) : j.timeoutMs,
      ),
      template: {
        metadata: { labels: { ...labels } },
        spec: {
          serviceAccountName: isolated ? checkJobName(j.check, j.runId) : c.names.rbac,
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

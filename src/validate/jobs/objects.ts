/** Pure builders of one validation run's objects; every name carries the run ID. */

import { jobDeadlineSeconds } from "../../agent/job-spec.ts";
import { type OwnerRef, ownerReference } from "../../agent/rbac-objects.ts";
import { LABEL } from "../../core/labels.ts";
import { type RunIdentity, runLabels } from "../../run/labels.ts";
import { nameWithRunId } from "../../run/names.ts";
import { VALIDATOR_CLUSTER_RULES, VALIDATOR_ENV } from "../catalog.ts";
import type { Phase } from "../recipe.ts";

export const VALIDATION_COMPONENT = "validation";
export const PHASE_LABEL = "aicr.run/phase";
export const VALIDATOR_LABEL = "aicr.run/validator";
export const VALIDATOR_CONTAINER = "validator";
const RBAC = "rbac.authorization.k8s.io/v1";
const TTL_SECONDS = 3600;

export interface ValidationNames {
  /** ServiceAccount, ClusterRole, ClusterRoleBinding, Role and RoleBinding. */
  rbac: string;
  snapshotConfigMap: string;
  recipeConfigMap: string;
}

export const validationNames = (runId: string): ValidationNames => ({
  rbac: nameWithRunId("aicr-validator", runId),
  snapshotConfigMap: nameWithRunId("aicr-snapshot", runId),
  recipeConfigMap: nameWithRunId("aicr-recipe", runId),
});

/** `aicr-<check>-<runID>`, the check part cut so the whole fits 63 characters. */
export const checkJobName = (check: string, runId: string): string => nameWithRunId(`aicr-${check}`, runId);

/** The five run labels with component=validation. */
export const validationLabels = (id: RunIdentity): Record<string, string> => ({
  ...runLabels(id),
  [LABEL.component]: VALIDATION_COMPONENT,
});

export interface Ctx {
  names: ValidationNames;
  namespace: string;
  labels: Record<string, string>;
}

const meta = (name: string, c: Ctx, o: { namespaced: boolean; owner?: OwnerRef }) => ({
  name,
  ...(o.namespaced ? { namespace: c.namespace } : {}),
  labels: { ...c.labels },
  ...(o.owner ? { ownerReferences: [ownerReference(o.owner)] } : {}),
});

/** The anchor: only the read rules the built-in validators use. Deleting it collects the run. */
export const buildValidatorClusterRole = (c: Ctx) => ({
  apiVersion: RBAC,
  kind: "ClusterRole",
  metadata: meta(c.names.rbac, c, { namespaced: false }),
  rules: VALIDATOR_CLUSTER_RULES.map((r) => ({ ...r })),
});

const subjects = (c: Ctx) => [{ kind: "ServiceAccount", name: c.names.rbac, namespace: c.namespace }];

/** Everything but the anchor and the Jobs, each owned by the anchor. */
export function buildSupportObjects(c: Ctx, owner: OwnerRef, data: { snapshot: string; recipe: string }) {
  const m = (namespaced: boolean) => meta(c.names.rbac, c, { namespaced, owner });
  const cm = (name: string, key: string, text: string) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: meta(name, c, { namespaced: true, owner }),
    data: { [key]: text },
  });
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: m(true) },
    {
      apiVersion: RBAC,
      kind: "ClusterRoleBinding",
      metadata: m(false),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: c.names.rbac },
      subjects: subjects(c),
    },
    {
      apiVersion: RBAC,
      kind: "Role",
      metadata: m(true),
      rules: [
        {
          apiGroups: [""],
          resources: ["configmaps"],
          verbs: ["get"],
          resourceNames: [c.names.snapshotConfigMap, c.names.recipeConfigMap],
        },
      ],
    },
    {
      apiVersion: RBAC,
      kind: "RoleBinding",
      metadata: m(true),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: c.names.rbac },
      subjects: subjects(c),
    },
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
}

const seccompProfile = { type: "RuntimeDefault" };

/** One validator Job: the binary's validator mode, PSS-restricted, reading its data through the API. */
export function buildCheckJob(c: Ctx, j: CheckJobInput) {
  const labels = { ...c.labels, [PHASE_LABEL]: j.phase, [VALIDATOR_LABEL]: j.check };
  const env = [
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
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { ...meta(checkJobName(j.check, j.runId), c, { namespaced: true, owner: j.owner }), labels },
    spec: {
      backoffLimit: 0,
      ttlSecondsAfterFinished: TTL_SECONDS,
      // A backstop past the remote side's own wait, so the wait (and its TIMEOUT) always decides first.
      activeDeadlineSeconds: jobDeadlineSeconds(j.timeoutMs),
      template: {
        metadata: { labels: { ...labels } },
        spec: {
          serviceAccountName: c.names.rbac,
          // Validators read the API only: keep them off GPU nodes when another node can take them.
          affinity: {
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
          },
          restartPolicy: "Never",
          securityContext: { runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534, seccompProfile },
          containers: [
            {
              name: VALIDATOR_CONTAINER,
              image: j.image,
              command: ["aicr"],
              args: ["validate", "--validator", j.check],
              env,
              terminationMessagePath: "/dev/termination-log",
              terminationMessagePolicy: "FallbackToLogsOnError",
              resources: {
                requests: { cpu: "100m", memory: "128Mi" },
                limits: { cpu: "500m", memory: "256Mi" },
              },
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

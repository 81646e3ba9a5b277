import { expect, test } from "bun:test";
import { resolveValidateOptions } from "../../../../src/commands/_validate-flags.ts";
import { runLabels } from "../../../../src/run/labels.ts";
import { VALIDATOR_CLUSTER_RULES } from "../../../../src/validate/_catalog.ts";
import {
  buildCheckJob,
  buildSupportObjects,
  buildValidatorClusterRole,
  checkJobName,
  VALIDATION_COMPONENT,
  validationNames,
} from "../../../../src/validate/jobs/_objects.ts";
import { truncateOutput, verdictMessage } from "../../../../src/validate/jobs/_run-one.ts";

const RUN = "20261129-120000-0123456789abcdef";
const id = { runId: RUN, invocationId: "inv-1" };
const ctx = { names: validationNames(RUN), namespace: "ns", labels: runLabels(id, VALIDATION_COMPONENT) };
const owner = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  name: ctx.names.rbac,
  uid: "u1",
};

test("every name carries the run ID; a long check name is cut to fit 63", () => {
  expect(ctx.names).toEqual({
    rbac: `aicr-validator-${RUN}`,
    snapshotConfigMap: `aicr-snapshot-${RUN}`,
    recipeConfigMap: `aicr-recipe-${RUN}`,
  });
  expect(checkJobName("operator-health", RUN)).toBe(`aicr-operator-health-${RUN}`);
  const long = checkJobName("a-very-long-validator-name-for-testing", RUN);
  expect(long.length).toBeLessThanOrEqual(63);
  expect(long.endsWith(RUN)).toBe(true);
});

test("the five run labels with component=validation; Jobs add phase and validator", () => {
  expect(ctx.labels).toEqual({
    "app.kubernetes.io/name": "aicr",
    "app.kubernetes.io/managed-by": "aicr",
    "app.kubernetes.io/component": "validation",
    "aicr.run/run-id": RUN,
    "aicr.run/invocation-id": "inv-1",
  });
  const job = buildCheckJob(ctx, {
    check: "operator-health",
    phase: "deployment",
    runId: RUN,
    image: "img",
    timeoutMs: 90_500,
    owner,
  });
  expect(job.metadata.labels).toMatchObject({
    "aicr.run/phase": "deployment",
    "aicr.run/validator": "operator-health",
  });
  expect(job.spec.template.metadata.labels).toEqual(job.metadata.labels);
  expect(job.metadata.ownerReferences).toEqual([{ ...owner, blockOwnerDeletion: false }]);
  expect(job.spec.activeDeadlineSeconds).toBe(151);
  const pod = job.spec.template.spec;
  expect(pod.serviceAccountName).toBe(ctx.names.rbac);
  expect(pod.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.preference).toEqual({
    matchExpressions: [{ key: "nvidia.com/gpu.present", operator: "DoesNotExist" }],
  });
  expect(pod.containers[0]?.args).toEqual(["validator", "operator-health"]);
  expect(pod.containers[0]?.securityContext).toMatchObject({
    allowPrivilegeEscalation: false,
    runAsNonRoot: true,
  });
  expect(pod.containers[0]?.env.map((e) => e.name)).toEqual([
    "AICR_RUN_ID",
    "AICR_VALIDATOR_NAME",
    "AICR_VALIDATOR_PHASE",
    "AICR_NAMESPACE",
    "AICR_SNAPSHOT_CONFIGMAP",
    "AICR_RECIPE_CONFIGMAP",
  ]);
});

test("RBAC: only the validators' read rules cluster-wide, get on exactly the two ConfigMaps", () => {
  const cr = buildValidatorClusterRole(ctx);
  expect(cr.rules).toEqual(VALIDATOR_CLUSTER_RULES.map((r) => ({ ...r })));
  expect(cr.rules.flatMap((r) => r.verbs).every((v) => v === "get" || v === "list")).toBe(true);
  expect(cr.rules.flatMap((r) => r.resources)).not.toContain("secrets");
  expect("ownerReferences" in cr.metadata).toBe(false);
  const objects = buildSupportObjects(ctx, owner, { snapshot: "s", recipe: "r" });
  expect(objects.map((o) => o.kind)).toEqual([
    "ServiceAccount",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "ConfigMap",
    "ConfigMap",
  ]);
  const role = objects[2] as { rules: unknown[] };
  expect(role.rules).toEqual([
    {
      apiGroups: [""],
      resources: ["configmaps"],
      verbs: ["get"],
      resourceNames: [ctx.names.snapshotConfigMap, ctx.names.recipeConfigMap],
    },
  ]);
  expect(
    objects.every((o) => (o.metadata as { ownerReferences?: unknown[] }).ownerReferences?.length === 1),
  ).toBe(true);
});

test("output is bounded; the verdict line stands in for the termination message", () => {
  expect(truncateOutput(Array.from({ length: 80 }, (_, i) => `l${i}`).join("\n"))).toHaveLength(50);
  expect(verdictMessage(["x", "failed: no ClusterPolicy", '{"level":"error"}'])).toBe("no ClusterPolicy");
  expect(verdictMessage(["x"])).toBeUndefined();
});

test("options: defaults, the table only on a terminal, phases de-duplicated", () => {
  const o = resolveValidateOptions(
    { recipe: "r.yaml", phases: ["deployment", "all"], skipChecks: [] },
    {},
    true,
  );
  expect(o).toMatchObject({
    namespace: "aicr-validation",
    format: "table",
    failOnError: true,
    cleanup: true,
    timeoutMs: 300_000,
  });
  expect(o.phases).toEqual(["deployment", "performance", "conformance"]);
  expect(
    resolveValidateOptions({ recipe: "r", phases: [], skipChecks: [] }, { AICR_NAMESPACE: "x" }, false),
  ).toMatchObject({ namespace: "x", format: "json" });
  expect(
    resolveValidateOptions({ recipe: "cm://a/b", phases: [], skipChecks: [], output: "f.json" }, {}, true)
      .recipe,
  ).toEqual({ kind: "configmap", ref: { namespace: "a", name: "b" } });
});

test("placement flags reach every validator pod; a per-node check is bound to its node and holds one GPU", () => {
  const placement = {
    nodeSelector: { pool: "gpu" },
    tolerations: [{ key: "dedicated", operator: "Equal" as const, value: "ml", effect: "NoSchedule" }],
    imagePullSecrets: ["regcred"],
  };
  const placed = { ...ctx, placement };
  const base = { phase: "deployment" as const, runId: RUN, image: "img", timeoutMs: 60_000, owner };
  const plain = buildCheckJob(placed, { ...base, check: "operator-health" }).spec.template.spec;
  expect(plain.nodeSelector).toEqual({ pool: "gpu" });
  expect(plain.tolerations).toEqual(placement.tolerations);
  expect(plain.imagePullSecrets).toEqual([{ name: "regcred" }]);
  expect(plain.containers[0]?.resources.requests).toEqual({ cpu: "100m", memory: "128Mi" });
  const job = buildCheckJob(placed, {
    ...base,
    check: "check-nvidia-smi",
    node: { name: "gpu-node-1", index: 3 },
  });
  expect(job.metadata.name).toBe(`aicr-check-nvidia-smi-3-${RUN}`);
  const pod = job.spec.template.spec;
  expect(pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual(
    [{ matchFields: [{ key: "metadata.name", operator: "In", values: ["gpu-node-1"] }] }],
  );
  expect(pod.containers[0]?.resources.limits["nvidia.com/gpu"]).toBe("1");
  expect(pod.containers[0]?.resources.requests["nvidia.com/gpu"]).toBe("1");
  expect(pod.tolerations).toEqual([
    ...placement.tolerations,
    { key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" },
  ]);
  expect(pod.containers[0]?.env).toContainEqual({
    name: "AICR_NODE_NAME",
    valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "spec.nodeName" } },
  });
  // Without placement flags the pods are as before: no selector, no tolerations, no pull secrets.
  const bare = buildCheckJob(ctx, { ...base, check: "operator-health" }).spec.template.spec;
  expect([bare.nodeSelector, bare.tolerations, bare.imagePullSecrets]).toEqual([
    undefined,
    undefined,
    undefined,
  ]);
});

test("the validator ClusterRole is unchanged by check-nvidia-smi: reads of nodes, pods and ClusterPolicies only", () => {
  expect(VALIDATOR_CLUSTER_RULES.flatMap((r) => r.verbs.map((v) => `${v} ${r.resources.join(",")}`))).toEqual(
    ["get nodes", "list nodes", "get pods", "list pods", "get clusterpolicies", "list clusterpolicies"],
  );
});

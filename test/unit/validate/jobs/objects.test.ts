import { expect, test } from "bun:test";
import { resolveValidateOptions } from "../../../../src/commands/_validate-flags.ts";
import { jobDeadlineSeconds } from "../../../../src/deployer/job-spec.ts";
import { runLabels } from "../../../../src/run/labels.ts";
import { findValidator, VALIDATOR_CLUSTER_RULES } from "../../../../src/validate/_catalog.ts";
import {
  buildCheckIdentity,
  buildCheckJob,
  buildPhaseReport,
  buildSupportObjects,
  buildValidatorClusterRole,
  checkJobName,
  phaseReportName,
  VALIDATION_COMPONENT,
  validationNames,
} from "../../../../src/validate/jobs/_objects.ts";
import { truncateOutput, verdictMessage } from "../../../../src/validate/jobs/_run-one.ts";
import { parseRecipe } from "../../../../src/validate/recipe.ts";

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
  expect(truncateOutput(Array.from({ length: 1200 }, (_, i) => `l${i}`).join("\n"))).toHaveLength(1000);
  const [long] = truncateOutput("x".repeat(600));
  expect(long).toBe(`${"x".repeat(512)}... [truncated 88 chars]`);
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

test("an isolated check's identity: its namespace, ServiceAccount, ClusterRole and Role, one name, owned by the anchor", () => {
  const entry = findValidator("dra-support");
  if (!entry) throw new Error("dra-support is in the catalog");
  const recipe = parseRecipe("kind: RecipeMetadata\nspec: {}\n", "r");
  const { namespace, rest } = buildCheckIdentity(ctx, { entry, runId: RUN, recipe }, owner);
  const name = `aicr-dra-support-${RUN}`;
  expect(namespace.metadata.name).toBe(name);
  expect(namespace.metadata.labels["aicr.run/validator"]).toBe("dra-support");
  expect(rest.map((o) => `${o.kind} ${o.metadata.namespace ?? "-"}/${o.metadata.name}`)).toEqual([
    `ServiceAccount ns/${name}`,
    `ClusterRole -/${name}`,
    `ClusterRoleBinding -/${name}`,
    `Role ${name}/${name}`,
    `RoleBinding ${name}/${name}`,
  ]);
  for (const o of [namespace, ...rest]) expect(o.metadata.ownerReferences?.[0]?.uid).toBe("u1");
  const role = rest.find((o) => o.kind === "Role") as { rules: { resources: string[]; verbs: string[] }[] };
  expect(role.rules.flatMap((r) => r.resources)).toEqual(["pods", "pods/log", "resourceclaims"]);
  // no cluster-wide write: every ClusterRole verb reads
  const clusterRole = rest.find((o) => o.kind === "ClusterRole") as { rules: { verbs: string[] }[] };
  expect(clusterRole.rules.flatMap((r) => r.verbs).every((v) => ["get", "list", "watch"].includes(v))).toBe(
    true,
  );
  // its Job runs as that ServiceAccount, told its namespace, image, labels and limit
  const job = buildCheckJob(ctx, {
    check: "dra-support",
    phase: "conformance",
    runId: RUN,
    image: "img",
    timeoutMs: 3_600_000,
    owner,
    isolated: { timeoutMs: entry.timeoutMs, waitScale: "0.1" },
  });
  const pod = job.spec.template.spec;
  expect(pod.serviceAccountName).toBe(name);
  expect(job.spec.activeDeadlineSeconds).toBe(jobDeadlineSeconds(entry.timeoutMs + 30_000));
  const env = Object.fromEntries(pod.containers[0]!.env.map((e) => [e.name, e.value]));
  expect(env.AICR_TEST_NAMESPACE).toBe(name);
  expect(env.AICR_PROBE_IMAGE).toBe("img");
  expect(env.AICR_CHECK_TIMEOUT_MS).toBe(String(entry.timeoutMs));
  expect(env.AICR_CHECK_WAIT_SCALE).toBe("0.1");
  expect(JSON.parse(env.AICR_CHECK_LABELS ?? "{}")["aicr.run/run-id"]).toBe(RUN);
});

test("the data ConfigMaps' RoleBinding names every isolated check's ServiceAccount; the phase report is owned", () => {
  const objects = buildSupportObjects(ctx, owner, { snapshot: "s", recipe: "r" }, ["aicr-x-1"]);
  const binding = objects.find((o) => o.kind === "RoleBinding") as { subjects: { name: string }[] };
  expect(binding.subjects.map((s) => s.name)).toEqual([ctx.names.rbac, "aicr-x-1"]);
  const report = buildPhaseReport(ctx, owner, { phase: "conformance", runId: RUN, ctrf: { a: 1 } });
  expect(report.metadata.name).toBe(phaseReportName(RUN, "conformance"));
  expect(report.metadata.name).toBe(`aicr-ctrf-${RUN}-conformance`);
  expect(report.metadata.labels["aicr.run/report-type"]).toBe("ctrf");
  expect(report.metadata.labels["aicr.run/phase"]).toBe("conformance");
  expect(JSON.parse(report.data?.["report.json"] ?? "")).toEqual({ a: 1 });
});

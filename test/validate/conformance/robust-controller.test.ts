/**
 * robust-controller against the real control plane: the Dynamo and Kubeflow Trainer stand-ins
 * (test/cluster/standins/operators.ts) — Deployments the process kubelet runs, their CRDs, and
 * validating webhooks the real apiserver calls at this process's HTTPS servers — each denying the
 * check's invalid resource (pass), allowing everything (fail, the resource deleted again), or without
 * endpoints (fail); a recipe naming neither operator skips.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { run } from "../../../src/validate/checks/robust-controller.ts";
import type { Recipe } from "../../../src/validate/recipe.ts";
import { node } from "../../cluster/nodes.ts";
import { adminClient } from "../../cluster/standins/_host.ts";
import { installOperator, type OperatorStandin } from "../../cluster/standins/operators.ts";
import { CLUSTER_HOOK_MS } from "../../cluster/testbed.ts";
import { useCluster } from "../../support/cluster.ts";
import { checkContext } from "./_context.ts";
import { runAsIdentity } from "./_run-check.ts";
import { objectsIn, standinCluster } from "./_standin-cluster.ts";

const recipe = (...names: string[]): Recipe =>
  ({
    kind: "RecipeMetadata",
    spec: { constraints: [], componentRefs: names.map((name) => ({ name, namespace: name })) },
  }) as unknown as Recipe;
const DYNAMO = recipe("gpu-operator", "dynamo-platform");
const TRAINER = recipe("gpu-operator", "kubeflow-trainer");
const LEFT = [
  { apiVersion: "nvidia.com/v1alpha1", kind: "DynamoGraphDeployment" },
  { apiVersion: "trainer.kubeflow.org/v1alpha1", kind: "TrainJob" },
];

describe("[real] robust-controller", () => {
  let dynamo: OperatorStandin | undefined;
  let trainer: OperatorStandin | undefined;
  // Registered before the cluster's hooks: the stand-ins stop while the cluster is still up.
  afterAll(async () => {
    await dynamo?.stop();
    await trainer?.stop();
  }, CLUSTER_HOOK_MS);
  const cluster = useCluster("real", { start: () => standinCluster([node("cpu-node-1")]) });
  beforeAll(async () => {
    dynamo = await installOperator(cluster(), { operator: "dynamo" });
    trainer = await installOperator(cluster(), { operator: "trainer" });
  }, CLUSTER_HOOK_MS);
  const op = (o: OperatorStandin | undefined) => {
    if (!o) throw new Error("the operator stand-in is not installed");
    return o;
  };

  /** The check as its own identity (the catalog's rules); the namespace as the run makes it. */
  async function asIdentity(r: Recipe) {
    const ctx = await checkContext(cluster(), "robust-controller", { recipe: r });
    const { verdict } = await runAsIdentity(cluster(), "robust-controller", ctx, run);
    return { ctx, verdict, left: await objectsIn(cluster(), ctx.testNamespace, LEFT) };
  }

  test("skips when the recipe names neither Dynamo nor Kubeflow Trainer (or there is no recipe)", async () => {
    for (const r of [recipe("gpu-operator", "kube-prometheus-stack"), undefined]) {
      const ctx = await checkContext(cluster(), "robust-controller", { recipe: r, createNamespace: false });
      expect(await run(ctx)).toMatchObject({
        status: "skipped",
        message:
          "the recipe names neither dynamo-platform nor kubeflow-trainer: no CRD-based AI operator to test",
      });
    }
  });

  test("passes: Dynamo's webhook rejects the invalid DynamoGraphDeployment made in the check's namespace", async () => {
    const { ctx, verdict, left } = await asIdentity(DYNAMO);
    expect(verdict.status).toBe("passed");
    expect(verdict.message).toBe(
      `the Dynamo operator runs, its webhook dynamo-platform-dynamo-operator-validating-webhook-configuration has 1 endpoint(s); it rejected an invalid DynamoGraphDeployment (spec.services is empty) with HTTP 403: admission webhook "vdynamographdeployment.kb.io" denied the request: spec.services must define at least one service`,
    );
    expect(op(dynamo).reviews).toEqual([
      { kind: "DynamoGraphDeployment", name: ctx.name("robust-test"), allowed: false },
    ]);
    expect(ctx.blocks.map((b) => b.label)).toEqual([
      "Operator Deployment",
      "Operator pods",
      "Validating webhooks",
      "Validating Webhook",
      "Operator CRDs",
      "Webhook Rejection Test",
      "DynamoGraphDeployments",
      "Dynamo workload pods",
      "DynamoComponentDeployments",
    ]);
    expect(ctx.blocks[5]?.data).toContain(
      `Resource: nvidia.com/v1alpha1 DynamoGraphDeployment ${ctx.testNamespace}/`,
    );
    expect(ctx.blocks[5]?.data).toContain("Result: REJECTED\nHTTP status: 403\nReason: Forbidden");
    expect(left).toEqual([]);
  });

  test("Dynamo wins when the recipe names both operators", async () => {
    op(dynamo).reviews.length = 0;
    op(trainer).reviews.length = 0;
    const ctx = await checkContext(cluster(), "robust-controller", {
      recipe: recipe("kubeflow-trainer", "dynamo-platform"),
    });
    expect((await run(ctx)).status).toBe("passed");
    expect(op(dynamo).reviews).toHaveLength(1);
    expect(op(trainer).reviews).toEqual([]);
  });

  test("fails when Dynamo's webhook allows the invalid resource, which is deleted again", async () => {
    op(dynamo).webhook = "allow";
    try {
      const { ctx, verdict, left } = await asIdentity(DYNAMO);
      expect(verdict).toMatchObject({
        status: "failed",
        message:
          "the API server accepted an invalid DynamoGraphDeployment (spec.services is empty): Dynamo's validating webhook did not reject it (deleted again)",
      });
      expect(ctx.blocks.find((b) => b.label === "Webhook Rejection Test")?.data).toContain(
        "Result: ACCEPTED",
      );
      expect(left).toEqual([]);
    } finally {
      op(dynamo).webhook = "deny";
    }
  });

  test("passes: Trainer's webhook rejects the TrainJob naming a runtime that does not exist", async () => {
    const { verdict, left } = await asIdentity(TRAINER);
    expect(verdict.status).toBe("passed");
    expect(verdict.message).toContain(
      'it rejected an invalid TrainJob (spec.runtimeRef names ClusterTrainingRuntime robust-test-nonexistent-runtime, which does not exist) with HTTP 403: admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request: ClusterTrainingRuntime.trainer.kubeflow.org "robust-test-nonexistent-runtime" not found',
    );
    expect(left).toEqual([]);
  });

  test("fails when Trainer's webhook Service has no endpoints", async () => {
    const admin = adminClient(cluster());
    const svc = "kubeflow-trainer-controller-manager";
    await admin.delete({
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      namespace: "kubeflow",
      name: `${svc}-host`,
    });
    await admin.delete({ apiVersion: "v1", kind: "Endpoints", namespace: "kubeflow", name: svc });
    admin.close();
    op(trainer).reviews.length = 0;
    const { verdict, left } = await asIdentity(TRAINER);
    expect(verdict).toMatchObject({
      status: "failed",
      message: `webhook validator.trainjob.trainer.kubeflow.org's Service kubeflow/${svc} has no EndpointSlice: the webhook cannot be reached`,
    });
    expect(op(trainer).reviews).toEqual([]);
    expect(left).toEqual([]);
  });
});

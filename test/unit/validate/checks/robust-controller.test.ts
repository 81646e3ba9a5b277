import { describe, expect, test } from "bun:test";
import {
  DYNAMO,
  pickWebhookConfig,
  rejectionEvidence,
  rejectionVerdict,
  routeOperator,
  TRAINER,
} from "../../../../src/validate/checks/robust-controller.ts";

const CONTEXT = "the Dynamo operator runs, its webhook w has 1 endpoint(s)";
const DENIED =
  'admission webhook "v.kb.io" denied the request: spec.services must define at least one service';

describe("routing by the recipe's components", () => {
  test("Dynamo wins over Trainer; neither (or anything malformed) → undefined", () => {
    expect(routeOperator([{ name: "kubeflow-trainer" }, { name: "dynamo-platform" }])).toBe(DYNAMO);
    expect(routeOperator([{ name: "kubeflow-trainer" }])).toBe(TRAINER);
    expect(routeOperator([{ name: "gpu-operator" }])).toBeUndefined();
    expect(routeOperator(undefined)).toBeUndefined();
    expect(routeOperator("dynamo-platform")).toBeUndefined();
  });
});

describe("the operator's webhook configuration", () => {
  const configs = [
    { metadata: { name: "cert-manager-webhook" } },
    { metadata: { name: "dynamo-platform-dynamo-operator-validating-webhook-configuration" } },
    { metadata: { name: "validator.trainer.kubeflow.org" } },
  ];
  test("Dynamo: the first whose name contains dynamo; Trainer: the exact name", () => {
    expect(pickWebhookConfig(DYNAMO, configs)?.metadata?.name).toBe(
      "dynamo-platform-dynamo-operator-validating-webhook-configuration",
    );
    expect(pickWebhookConfig(TRAINER, configs)?.metadata?.name).toBe("validator.trainer.kubeflow.org");
    expect(
      pickWebhookConfig(TRAINER, [{ metadata: { name: "validator.trainer.kubeflow.org-old" } }]),
    ).toBeUndefined();
  });
});

describe("the rejection test's verdict", () => {
  test("passed: a 403 or 422 that is not an RBAC denial", () => {
    for (const httpStatus of [403, 422]) {
      const v = rejectionVerdict(
        DYNAMO,
        { kind: "refused", httpStatus, reason: "Forbidden", message: DENIED },
        CONTEXT,
      );
      expect(v.status).toBe("passed");
      expect(v.message).toBe(
        `${CONTEXT}; it rejected an invalid DynamoGraphDeployment (spec.services is empty) with HTTP ${httpStatus}: ${DENIED}`,
      );
    }
    // Dynamo takes any such refusal (a schema's 422 too); Trainer wants the webhook's words.
    expect(
      rejectionVerdict(
        DYNAMO,
        { kind: "refused", httpStatus: 422, reason: "Invalid", message: "spec.services: Required value" },
        CONTEXT,
      ).status,
    ).toBe("passed");
  });

  test("failed: accepted (deleted again), an RBAC denial, another status, another error", () => {
    expect(rejectionVerdict(DYNAMO, { kind: "accepted", deleted: true }, CONTEXT).message).toBe(
      "the API server accepted an invalid DynamoGraphDeployment (spec.services is empty): Dynamo's validating webhook did not reject it (deleted again)",
    );
    const rbac =
      'dynamographdeployments.nvidia.com is forbidden: User "system:serviceaccount:ns:sa" cannot create resource "dynamographdeployments" in API group "nvidia.com" in the namespace "ns"';
    expect(
      rejectionVerdict(
        DYNAMO,
        { kind: "refused", httpStatus: 403, reason: "Forbidden", message: rbac },
        CONTEXT,
      ).message,
    ).toBe(
      `the check's identity may not create DynamoGraphDeployment resources (RBAC), so the webhook was never asked: ${rbac}`,
    );
    expect(
      rejectionVerdict(
        DYNAMO,
        { kind: "refused", httpStatus: 500, reason: "InternalError", message: "failed calling webhook" },
        CONTEXT,
      ).message,
    ).toBe(
      "creating an invalid DynamoGraphDeployment (spec.services is empty) was answered HTTP 500 (InternalError), not a rejection (403 or 422): failed calling webhook",
    );
    expect(rejectionVerdict(DYNAMO, { kind: "error", message: "connection reset" }, CONTEXT).status).toBe(
      "failed",
    );
  });

  test("Trainer: a refusal that names no admission webhook fails", () => {
    const v = rejectionVerdict(
      TRAINER,
      {
        kind: "refused",
        httpStatus: 422,
        reason: "Invalid",
        message: 'TrainJob.trainer.kubeflow.org "x" is invalid: spec.runtimeRef.name: Required value',
      },
      CONTEXT,
    );
    expect(v.status).toBe("failed");
    expect(v.message).toStartWith(
      "an invalid TrainJob (spec.runtimeRef names ClusterTrainingRuntime robust-test-nonexistent-runtime, which does not exist) was refused (HTTP 422), but not by an admission webhook:",
    );
  });

  test("evidence: the resource, the result, HTTP status, reason and message", () => {
    expect(
      rejectionEvidence(DYNAMO, "robust-test-r1", "aicr-robust-controller-r1", {
        kind: "refused",
        httpStatus: 403,
        reason: "Forbidden",
        message: DENIED,
      }),
    ).toBe(
      `Resource: nvidia.com/v1alpha1 DynamoGraphDeployment aicr-robust-controller-r1/robust-test-r1 (spec.services is empty)\nResult: REJECTED\nHTTP status: 403\nReason: Forbidden\nMessage: ${DENIED}`,
    );
  });
});

import { describe, expect, test } from "bun:test";
import { absent, found, readError } from "../../../../src/validate/checks/_read-outcome.ts";
import {
  type PlatformReads,
  platformHealthVerdict,
  platformPlan,
  resourceState,
} from "../../../../src/validate/checks/platform-health.ts";

describe("platformPlan", () => {
  test("distinct namespaces in order; expected resources with their component; namespace defaults to the component's", () => {
    const plan = platformPlan([
      {
        name: "gpu-operator",
        namespace: "gpu-operator",
        expectedResources: [
          { kind: "Deployment", name: "gpu-operator", namespace: "gpu-operator" },
          { kind: "DaemonSet", name: "nvidia-dcgm-exporter" },
        ],
      },
      { name: "cert-manager", namespace: "cert-manager" },
      { name: "again", namespace: "gpu-operator", overrides: { enabled: false }, expectedResources: [] },
      { name: "no-namespace" },
    ]);
    expect(plan.namespaces).toEqual(["gpu-operator", "cert-manager"]);
    expect(plan.resources).toEqual([
      { kind: "Deployment", name: "gpu-operator", namespace: "gpu-operator", component: "gpu-operator" },
      {
        kind: "DaemonSet",
        name: "nvidia-dcgm-exporter",
        namespace: "gpu-operator",
        component: "gpu-operator",
      },
    ]);
    expect(plan.malformed).toEqual([]);
  });

  test("read defensively: absent is nothing to check, malformed entries are issues", () => {
    expect(platformPlan(undefined)).toEqual({ namespaces: [], resources: [], malformed: [] });
    expect(platformPlan(null).malformed).toEqual([]);
    expect(platformPlan({ a: 1 }).malformed).toEqual(["spec.componentRefs is not a list"]);
    const plan = platformPlan([
      "text",
      { name: "c", expectedResources: "x" },
      { name: "d", expectedResources: [{ kind: "Service" }, 5, { kind: "ConfigMap", name: "n" }] },
      { namespace: 7, expectedResources: [{ kind: "Secret", name: "s", namespace: "ns" }] },
    ]);
    expect(plan.malformed).toEqual([
      "spec.componentRefs[0] is not a map",
      "component c: expectedResources is not a list",
      "component d: expectedResources[0] has no name, namespace",
      "component d: expectedResources[1] has no kind, name, namespace",
      "component d: expectedResources[2] has no namespace",
    ]);
    expect(plan.resources).toEqual([
      { kind: "Secret", name: "s", namespace: "ns", component: "componentRefs[3]" },
    ]);
  });
});

describe("resourceState", () => {
  test("Deployment: available ≥ spec.replicas (default 1)", () => {
    expect(
      resourceState("Deployment", found({ spec: { replicas: 2 }, status: { availableReplicas: 2 } })).issue,
    ).toBeUndefined();
    expect(
      resourceState("Deployment", found({ spec: { replicas: 2 }, status: { availableReplicas: 1 } })).issue,
    ).toBe("1 of 2 replica(s) available");
    expect(resourceState("Deployment", found({ status: {} })).issue).toBe("0 of 1 replica(s) available");
    expect(resourceState("Deployment", found({ spec: { replicas: 0 } })).issue).toBeUndefined();
  });
  test("DaemonSet: numberReady ≥ desiredNumberScheduled; StatefulSet: readyReplicas ≥ spec.replicas", () => {
    expect(
      resourceState("DaemonSet", found({ status: { numberReady: 1, desiredNumberScheduled: 2 } })).issue,
    ).toBe("1 of 2 pod(s) ready");
    expect(
      resourceState("DaemonSet", found({ status: { numberReady: 0, desiredNumberScheduled: 0 } })).issue,
    ).toBeUndefined();
    expect(
      resourceState("StatefulSet", found({ spec: { replicas: 3 }, status: { readyReplicas: 2 } })).issue,
    ).toBe("2 of 3 replica(s) ready");
    expect(resourceState("StatefulSet", found({ status: { readyReplicas: 1 } })).issue).toBeUndefined();
  });
  test("Service, ConfigMap, Secret: existence; other kinds unsupported; reads that failed", () => {
    for (const kind of ["Service", "ConfigMap", "Secret"]) {
      expect(resourceState(kind, found({})).issue).toBeUndefined();
      expect(resourceState(kind, absent).issue).toBe("not found");
    }
    expect(resourceState("Job", found({})).issue).toBe("unsupported kind");
    expect(resourceState("Service", readError("reading Service a/b: no answer within 10 s")).issue).toBe(
      "reading Service a/b: no answer within 10 s",
    );
  });
});

describe("platformHealthVerdict", () => {
  const plan = platformPlan([
    {
      name: "gpu-operator",
      namespace: "gpu-operator",
      expectedResources: [
        { kind: "Deployment", name: "gpu-operator" },
        { kind: "ConfigMap", name: "cfg" },
      ],
    },
    { name: "network-operator", namespace: "nvidia-network-operator" },
  ]);
  const reads = (over: Partial<PlatformReads> = {}): PlatformReads => ({
    namespaces: [
      { name: "gpu-operator", read: found({ status: { phase: "Active" } }) },
      { name: "nvidia-network-operator", read: found({ status: { phase: "Active" } }) },
    ],
    resources: [
      {
        resource: plan.resources[0]!,
        read: found({ spec: { replicas: 1 }, status: { availableReplicas: 1 } }),
      },
      { resource: plan.resources[1]!, read: found({}) },
    ],
    ...over,
  });

  test("passed: the counts, and one detail line per namespace and resource", () => {
    const v = platformHealthVerdict(plan, reads());
    expect(v).toMatchObject({
      status: "passed",
      message: "2 component namespace(s) Active, 2 expected resource(s) healthy",
    });
    expect(v.details).toEqual([
      "namespace gpu-operator: Active",
      "namespace nvidia-network-operator: Active",
      "Deployment gpu-operator/gpu-operator (gpu-operator): 1 of 1 replica(s) available",
      "ConfigMap gpu-operator/cfg (gpu-operator): exists",
    ]);
  });

  test("failed: every issue, counted, in the message", () => {
    const v = platformHealthVerdict(
      plan,
      reads({
        namespaces: [
          { name: "gpu-operator", read: found({ status: { phase: "Terminating" } }) },
          { name: "nvidia-network-operator", read: absent },
        ],
        resources: [
          { resource: plan.resources[0]!, read: found({ spec: { replicas: 1 }, status: {} }) },
          { resource: plan.resources[1]!, read: absent },
        ],
      }),
    );
    expect(v.status).toBe("failed");
    expect(v.message).toBe(
      "4 platform issue(s): namespace gpu-operator: phase Terminating, expected Active; namespace nvidia-network-operator: not found; Deployment gpu-operator/gpu-operator (gpu-operator): 0 of 1 replica(s) available; ConfigMap gpu-operator/cfg (gpu-operator): not found",
    );
  });

  test("malformed recipe entries are issues; nothing to check passes", () => {
    const bad = platformPlan([{ name: "x", expectedResources: [{ kind: "Service", name: "s" }] }]);
    expect(platformHealthVerdict(bad, { namespaces: [], resources: [] }).message).toBe(
      "1 platform issue(s): component x: expectedResources[0] has no namespace",
    );
    expect(platformHealthVerdict(platformPlan(undefined), { namespaces: [], resources: [] })).toMatchObject({
      status: "passed",
      message: "the recipe's components name no namespace and no expected resource: nothing to check",
    });
  });
});

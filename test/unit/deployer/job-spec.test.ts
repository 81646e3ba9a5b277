import { describe, expect, test } from "bun:test";
import {
  type AgentJobInput,
  buildAgentJob,
  mergeResources,
  podResources,
} from "../../../src/deployer/job-spec.ts";
import { runNames } from "../../../src/run/names.ts";

const RUN = "20260821-142233-9f3a1c0b7e2d4a55";
const names = runNames({ runId: RUN });
const labels = { "aicr.run/run-id": RUN };
const base: AgentJobInput = {
  names,
  namespace: "gpu-operator",
  labels,
  runId: RUN,
  image: "ghcr.io/nvidia/aicr:v0.1.0",
  serviceAccountName: names.serviceAccount,
  output: `cm://gpu-operator/${names.stagingConfigMap}`,
  outputIsStaging: true,
  privileged: true,
};
const spec = (input: Partial<AgentJobInput> = {}) => buildAgentJob({ ...base, ...input }) as any;
const container = (input: Partial<AgentJobInput> = {}) => spec(input).spec.template.spec.containers[0];
const pod = (input: Partial<AgentJobInput> = {}) => spec(input).spec.template.spec;

describe("agent Job", () => {
  test("the Job contract: run-scoped name, backoff 0, TTL 1h, deadline, restartPolicy Never", () => {
    const job = spec();
    expect(job.metadata).toMatchObject({ name: `aicr-${RUN}`, namespace: "gpu-operator", labels });
    expect(job.spec).toMatchObject({
      backoffLimit: 0,
      ttlSecondsAfterFinished: 3600,
      activeDeadlineSeconds: 18000,
      completions: 1,
      parallelism: 1,
    });
    expect(job.spec.template.metadata.labels).toEqual(labels);
    expect(job.spec.template.metadata.labels).not.toBe(job.metadata.labels);
    expect(pod().restartPolicy).toBe("Never");
    expect(pod().serviceAccountName).toBe(`aicr-${RUN}`);
  });

  test("the container: aicr, command aicr, args snapshot -o cm://…, env contract", () => {
    const c = container();
    expect(c.name).toBe("aicr");
    expect(c.command).toEqual(["aicr"]);
    expect(c.args).toEqual(["snapshot", "-o", `cm://gpu-operator/aicr-agent-snapshot-${RUN}`]);
    const env = Object.fromEntries(
      c.env.map((e: any) => [e.name, e.value ?? e.valueFrom.fieldRef.fieldPath]),
    );
    expect(env).toMatchObject({
      AICR_AGENT_MODE: "true",
      AICR_RUN_ID: RUN,
      NODE_NAME: "spec.nodeName",
      AICR_POD_UID: "metadata.uid",
      AICR_JOB_UID: "metadata.labels['batch.kubernetes.io/controller-uid']",
    });
    expect(c.env[0].name).toBe("AICR_AGENT_MODE");
    expect(container({ debug: true }).args).toEqual([
      "--debug",
      "--log-json",
      "snapshot",
      "-o",
      `cm://gpu-operator/aicr-agent-snapshot-${RUN}`,
    ]);
  });

  test("privileged: host namespaces, SYS_ADMIN, read-only systemd and os-release mounts, 3 volumes", () => {
    const p = pod();
    expect([p.hostPID, p.hostNetwork, p.hostIPC]).toEqual([true, true, true]);
    const c = container();
    expect(c.securityContext.privileged).toBe(true);
    expect(c.securityContext.capabilities.add).toContain("SYS_ADMIN");
    expect(p.volumes.map((v: any) => v.name)).toEqual(["tmp", "run-systemd", "host-os-release"]);
    expect(c.volumeMounts.filter((m: any) => m.name !== "tmp").every((m: any) => m.readOnly)).toBe(true);
    expect(c.resources).toEqual({
      requests: { cpu: "1", memory: "4Gi", "ephemeral-storage": "2Gi" },
      limits: { cpu: "2", memory: "8Gi", "ephemeral-storage": "4Gi" },
    });
  });

  test("talos skips the systemd and os-release host mounts", () => {
    expect(pod({ os: "talos" }).volumes.map((v: any) => v.name)).toEqual(["tmp"]);
    expect(container({ os: "talos" }).env.some((e: any) => e.name === "AICR_OS" && e.value === "talos")).toBe(
      true,
    );
  });

  test("restricted: non-root 65534, drop ALL, read-only root, seccomp RuntimeDefault, no host access", () => {
    const p = pod({ privileged: false });
    expect(p.hostPID).toBeUndefined();
    expect(p.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65534,
      seccompProfile: { type: "RuntimeDefault" },
    });
    const c = container({ privileged: false });
    expect(c.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65534,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(p.volumes).toEqual([{ name: "tmp", emptyDir: {} }]);
  });

  test("tolerates every taint by default; placement options pass through", () => {
    expect(pod().tolerations).toEqual([{ operator: "Exists" }]);
    const p = pod({
      tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
      nodeSelector: { "nvidia.com/gpu.present": "true" },
      imagePullSecrets: ["regcred"],
      runtimeClassName: "nvidia",
    });
    expect(p.tolerations).toEqual([{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }]);
    expect(p.nodeSelector).toEqual({ "nvidia.com/gpu.present": "true" });
    expect(p.imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(p.runtimeClassName).toBe("nvidia");
    expect(
      container({ runtimeClassName: "nvidia" }).env.some((e: any) => e.name === "NVIDIA_VISIBLE_DEVICES"),
    ).toBe(true);
  });

  test("require-gpu adds one GPU limit unless the caller set that key", () => {
    expect(container({ requireGpu: true }).resources.limits["nvidia.com/gpu"]).toBe("1");
    expect(
      container({ requireGpu: true, limits: { "nvidia.com/gpu": "2" } }).resources.limits["nvidia.com/gpu"],
    ).toBe("2");
    expect(container().resources.limits["nvidia.com/gpu"]).toBeUndefined();
  });

  test("resource overrides merge per key without mutating inputs", () => {
    const defaults = { cpu: "1", memory: "4Gi" };
    const overrides = { memory: "6Gi" };
    expect(mergeResources(defaults, overrides)).toEqual({ cpu: "1", memory: "6Gi" });
    expect(defaults).toEqual({ cpu: "1", memory: "4Gi" });
    expect(container({ requests: { cpu: "500m" } }).resources.requests).toEqual({
      cpu: "500m",
      memory: "4Gi",
      "ephemeral-storage": "2Gi",
    });
  });

  test("a request above a default limit raises that limit; one above a given limit is not touched here", () => {
    expect(container({ requests: { cpu: "64" } }).resources.limits.cpu).toBe("64");
    expect(container({ requests: { memory: "16Gi" } }).resources.limits.memory).toBe("16Gi");
    expect(container({ requests: { cpu: "1500m" } }).resources.limits.cpu).toBe("2");
    // An explicit limit is the operator's: the options refuse request > limit before building.
    expect(container({ requests: { cpu: "4" }, limits: { cpu: "8" } }).resources.limits.cpu).toBe("8");
    const restricted = container({ privileged: false, requests: { memory: "1Gi" } }).resources;
    expect(restricted.limits.memory).toBe("1Gi");
    expect(restricted.requests.memory).toBe("1Gi");
  });

  test("is deterministic", () => {
    expect(JSON.stringify(spec({ debug: true }))).toBe(JSON.stringify(spec({ debug: true })));
  });
});

test("the Job carries a non-blocking ownerReference to the run's anchor", () => {
  const anchor = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    name: names.clusterRole,
    uid: "u-1",
  };
  expect(buildAgentJob({ ...base, owner: anchor }).metadata.ownerReferences).toEqual([
    { ...anchor, blockOwnerDeletion: false },
  ]);
});

test("podResources: a resource named like a built-in (the SDK takes any record) is a name, not a limit", () => {
  const out = podResources(
    { requests: { cpu: "100m" }, limits: { cpu: "1" } },
    { requests: { constructor: "1", toString: "2" } },
  );
  expect(out.requests).toEqual({ cpu: "100m", constructor: "1", toString: "2" });
  expect(out.limits).toEqual({ cpu: "1" });
});

import { describe, expect, test } from "bun:test";
import type { Pod } from "../../../../src/validate/checks/_dra.ts";
import {
  claimPodIssue,
  devicePluginContainers,
  isolationVerdict,
  nvidiaHostPaths,
} from "../../../../src/validate/checks/secure-accelerator-access.ts";

const status = (name: string, exitCode: number) => ({
  name,
  state: { terminated: { exitCode } },
  image: "",
  imageID: "",
  ready: false,
  restartCount: 0,
});

function pod(
  o: { phase?: string; exitCode?: number; container?: string; spec?: Record<string, unknown> } = {},
): Pod {
  return {
    spec: {
      nodeName: "gpu-node-1",
      resourceClaims: [{ name: "gpu", resourceClaimName: "gpu-claim-r" }],
      containers: [{ name: o.container ?? "gpu-test", image: "aicr" }],
      ...o.spec,
    },
    status: {
      phase: o.phase ?? "Succeeded",
      containerStatuses: [status(o.container ?? "gpu-test", o.exitCode ?? 0)],
    },
  } as Pod;
}
const o = { pod: "dra-gpu-test-r", claim: "gpu-claim-r", claimExists: true, log: "", waitMs: 300_000 };

describe("the claim pod", () => {
  test("through DRA alone and Succeeded: no issue", () => {
    expect(claimPodIssue({ kind: "ended", pod: pod() }, o)).toBeUndefined();
  });

  test("in the original's order: no claim entries, device-plugin limit, hostPath, missing claim, phase", () => {
    const noClaims = pod({ spec: { resourceClaims: [] } });
    expect(claimPodIssue({ kind: "ended", pod: noClaims }, o)?.message).toBe(
      "pod dra-gpu-test-r has no spec.resourceClaims: its GPU access does not go through DRA",
    );
    const limited = pod({
      spec: {
        containers: [{ name: "gpu-test", image: "x", resources: { limits: { "nvidia.com/gpu": "1" } } }],
      },
    });
    expect(devicePluginContainers(limited)).toEqual(["gpu-test"]);
    expect(claimPodIssue({ kind: "ended", pod: limited }, o)?.message).toBe(
      "pod dra-gpu-test-r asks for nvidia.com/gpu in resources.limits (container gpu-test): GPU access through the device plugin, not DRA",
    );
    const host = pod({
      spec: {
        volumes: [
          { name: "dev", hostPath: { path: "/dev/nvidia0" } },
          { name: "tmp", emptyDir: {} },
        ],
      },
    });
    expect(nvidiaHostPaths(host)).toEqual(["dev (hostPath /dev/nvidia0)"]);
    expect(claimPodIssue({ kind: "ended", pod: host }, o)?.message).toBe(
      "pod dra-gpu-test-r mounts host device nodes: dev (hostPath /dev/nvidia0): GPU access bypasses DRA",
    );
    expect(claimPodIssue({ kind: "ended", pod: pod() }, { ...o, claimExists: false })?.message).toBe(
      "ResourceClaim gpu-claim-r not found after the test",
    );
    expect(
      claimPodIssue({ kind: "ended", pod: pod({ phase: "Failed", exitCode: 1 }) }, { ...o, log: "no GPU\n" })
        ?.message,
    ).toBe(
      "the GPU test pod dra-gpu-test-r holding ResourceClaim gpu-claim-r did not succeed (phase Failed, exit code 1): no GPU",
    );
  });

  test("stuck or timed out: failed", () => {
    expect(
      claimPodIssue({ kind: "stuck", pod: pod({ phase: "Pending" }), reason: "pod is unschedulable: x" }, o)
        ?.status,
    ).toBe("failed");
    expect(claimPodIssue({ kind: "timeout", last: undefined }, o)?.message).toBe(
      "the GPU test pod dra-gpu-test-r did not finish within 300 s (never seen)",
    );
  });
});

const iso = {
  pod: "dra-no-claim-r",
  node: "gpu-node-1",
  claimPod: "dra-gpu-test-r",
  claim: "gpu-claim-r",
  claimDevices: ["gpu.nvidia.com/gpu-node-1/gpu-0"],
  log: "",
  waitMs: 300_000,
};
const noClaim = (phase: string, exitCode: number) =>
  pod({ phase, exitCode, container: "isolation-test", spec: { resourceClaims: undefined } });

describe("the isolation probe", () => {
  test("Succeeded: passed, naming both pods and the node", () => {
    const v = isolationVerdict({ kind: "ended", pod: noClaim("Succeeded", 0) }, iso);
    expect(v.status).toBe("passed");
    expect(v.message).toBe(
      "GPU access goes only through DRA: pod dra-gpu-test-r got its GPU through ResourceClaim gpu-claim-r, and pod dra-no-claim-r without a claim on node gpu-node-1 sees no /dev/nvidia*",
    );
  });

  test("exit 1: a GPU is visible without a claim — failed, listing what the probe saw", () => {
    const log =
      "/dev/nvidia0 (character device 195:0)\n/dev/nvidiactl (character device 195:255)\n2 /dev/nvidia* entries are visible to a container that holds no ResourceClaim (expected none)\n";
    const v = isolationVerdict({ kind: "ended", pod: noClaim("Failed", 1) }, { ...iso, log });
    expect(v.status).toBe("failed");
    expect(v.message).toBe(
      "a pod without a ResourceClaim sees GPU devices on node gpu-node-1: /dev/nvidia0, /dev/nvidiactl (expected none)",
    );
  });

  test("another exit code: isolation cannot be verified", () => {
    const v = isolationVerdict(
      { kind: "ended", pod: noClaim("Failed", 2) },
      { ...iso, log: "ERROR unknown probe" },
    );
    expect(v.message).toBe(
      "isolation cannot be verified: the no-claim pod dra-no-claim-r failed with exit code 2: ERROR unknown probe",
    );
  });

  test("a /dev/nvidia hostPath on the no-claim pod fails it even when it succeeded", () => {
    const p = noClaim("Succeeded", 0);
    (p.spec as { volumes?: unknown[] }).volumes = [{ name: "nv", hostPath: { path: "/dev/nvidiactl" } }];
    expect(isolationVerdict({ kind: "ended", pod: p }, iso).message).toBe(
      "the no-claim pod dra-no-claim-r mounts host device nodes: nv (hostPath /dev/nvidiactl)",
    );
  });

  test("stuck or timed out: cannot be verified, with the pod's last state", () => {
    expect(
      isolationVerdict(
        {
          kind: "stuck",
          pod: noClaim("Pending", 0),
          reason: "container isolation-test is waiting: ErrImagePull",
        },
        iso,
      ).message,
    ).toBe(
      "isolation cannot be verified: the no-claim pod dra-no-claim-r cannot run: container isolation-test is waiting: ErrImagePull",
    );
    expect(isolationVerdict({ kind: "timeout", last: noClaim("Pending", 0) }, iso).message).toBe(
      "isolation cannot be verified: the no-claim pod dra-no-claim-r did not finish within 300 s (phase Pending, node gpu-node-1)",
    );
  });
});

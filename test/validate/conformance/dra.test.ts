/**
 * dra-support and secure-accelerator-access against the real control plane, each run in process as its
 * catalog identity: the DRA driver stand-in (test/cluster/dra.ts) — absent, healthy, broken — with the
 * real kube-scheduler allocating the checks' ResourceClaims and the process kubelet running their probe
 * pods as dist/aicr (`aicr probe devices`), giving a claim's container its /dev/nvidia* and a claim-less
 * one none, unless the leak switch (test/cluster/standins/gpu-access.ts) breaks isolation. One cluster,
 * its driver moved from absent to healthy to broken, so the tests run in this order.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { run as draSupport } from "../../../src/validate/checks/dra-support.ts";
import { run as secureAccess } from "../../../src/validate/checks/secure-accelerator-access.ts";
import { installDraDriver, scaleDraControllerToZero } from "../../cluster/dra.ts";
import type { GpuLeak } from "../../cluster/standins/gpu-access.ts";
import { CLUSTER_HOOK_MS } from "../../cluster/testbed.ts";
import { useCluster } from "../../support/cluster.ts";
import { runCheck as runCheckAs } from "./_run-check.ts";
import { draNodes, standinCluster } from "./_standin-cluster.ts";

const CREATED_KINDS = [
  { apiVersion: "v1", kind: "Pod" },
  { apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim" },
];
const T = 150_000;

const DRA_SUPPORT_BLOCKS = [
  "DRA API resources",
  "DRA driver pods",
  "DRA Controller Deployment",
  "DRA Kubelet Plugin DaemonSet",
  "ResourceSlices",
  "Apply test manifest",
  "ResourceClaim status",
  "Pod status",
  "Pod logs",
  "Delete test namespace",
];
const SECURE_BLOCKS = [
  "ClusterPolicy status",
  "GPU operator pods",
  "GPU operator DaemonSets",
  "ResourceSlices",
  "GPU devices in ResourceSlice",
  "Pod status",
  "Pod resourceClaims",
  "Pod volumes (no hostPath)",
  "ResourceClaim allocation",
  "Isolation test logs",
  "DRA Isolation Test",
  "No-claim pod logs",
];

describe("[real] dra-support and secure-accelerator-access", () => {
  const leak: GpuLeak = { enabled: false };
  const cluster = useCluster("real", { start: () => standinCluster(draNodes(), leak) });
  // Mirrors the DRA kinds into cluster().store; installs nothing (the driver absent).
  beforeAll(() => installDraDriver(cluster(), { state: "absent" }), CLUSTER_HOOK_MS);

  /** The check's whole run as its catalog identity (_run-check.ts), the pods and claims it left. */
  const runCheck = (check: "dra-support" | "secure-accelerator-access") =>
    runCheckAs(cluster(), check, check === "dra-support" ? draSupport : secureAccess, {
      kinds: CREATED_KINDS,
    });

  test(
    "dra-support: no DRA driver (no pods, no controller) — skipped with the reason, nothing created",
    async () => {
      const r = await runCheck("dra-support");
      expect(r.verdict.status, r.verdict.message).toBe("skipped");
      expect(r.verdict.message).toBe(
        "the NVIDIA DRA driver is not installed: no pods in namespace nvidia-dra-driver and no Deployment nvidia-dra-driver/nvidia-dra-driver-gpu-controller",
      );
      expect(r.ctx.blocks.map((b) => b.label)).toEqual(["DRA API resources"]);
      // kube-apiserver v1.36 serves the DRA API at v1.
      expect(r.ctx.blocks[0]?.data).toStartWith("resource.k8s.io/v1\n");
      expect(r.ctx.blocks[0]?.data).toContain("resourceclaims\tResourceClaim\tnamespaced=true");
      expect(r.left).toEqual([]);
      expect(r.refused).toEqual([]);
    },
    T,
  );

  test(
    "secure-accelerator-access: no DRA driver — failed (never skipped): the claim pod cannot be scheduled",
    async () => {
      const r = await runCheck("secure-accelerator-access");
      expect(r.verdict.status).toBe("failed");
      expect(r.verdict.message).toStartWith("the GPU test pod dra-gpu-test-");
      expect(r.verdict.message).toContain("cannot run: pod is unschedulable");
      expect(r.ctx.blocks.map((b) => b.label)).toEqual([...SECURE_BLOCKS.slice(0, 9)]);
      expect(r.ctx.blocks.find((b) => b.label === "ClusterPolicy status")?.data).toStartWith("error: ");
      expect(r.left).toEqual([]);
      expect(r.refused).toEqual([]);
    },
    T,
  );

  test(
    "dra-support with a healthy driver: a pod holding a ResourceClaim the real scheduler allocated sees its GPU — passed",
    async () => {
      await installDraDriver(cluster());
      const r = await runCheck("dra-support");
      expect(r.verdict.status, r.verdict.message).toBe("passed");
      expect(r.verdict.message).toMatch(
        /^a pod holding ResourceClaim gpu-claim-\S+ ran on node gpu-node-[12] and saw its GPU: 1 GPU device node visible: \/dev\/nvidia[01]$/,
      );
      expect(r.verdict.details[0]).toMatch(/: gpu\.nvidia\.com\/gpu-node-[12]\/gpu-[01]$/);
      expect(r.ctx.blocks.map((b) => b.label)).toEqual(DRA_SUPPORT_BLOCKS);
      const block = (label: string) => r.ctx.blocks.find((b) => b.label === label)?.data ?? "";
      expect(block("ResourceSlices")).toStartWith("Total ResourceSlices: 2\n");
      expect(block("ResourceClaim status")).toMatch(
        /allocated while the pod ran: yes\n {2}devices: gpu\.nvidia\.com\/gpu-node-[12]\/gpu-[01]\n {2}reservedFor: pods\/dra-gpu-test-\S+\n {2}after the pod: (exists, released|allocated.*)$/,
      );
      expect(block("Pod status")).toContain("phase: Succeeded");
      expect(block("Pod logs")).toMatch(/\/dev\/nvidiactl \(character device/);
      expect(r.requests.length).toBeGreaterThan(10);
      expect(block("Delete test namespace")).toMatch(
        /^Pod\/dra-gpu-test-\S+: deleted\nResourceClaim\/gpu-claim-\S+: deleted\n/,
      );
      expect(r.left).toEqual([]);
      expect(r.refused).toEqual([]);
    },
    T,
  );

  test(
    "secure-accelerator-access with a healthy driver: the claim pod gets a GPU through DRA only, a claim-less pod on its node sees none — passed",
    async () => {
      const r = await runCheck("secure-accelerator-access");
      expect(r.verdict.status, r.verdict.message).toBe("passed");
      expect(r.verdict.message).toMatch(
        /^GPU access goes only through DRA: pod dra-gpu-test-\S+ got its GPU through ResourceClaim gpu-claim-\S+, and pod dra-no-claim-\S+ without a claim on node gpu-node-[12] sees no \/dev\/nvidia\*$/,
      );
      expect(r.ctx.blocks.map((b) => b.label)).toEqual(SECURE_BLOCKS);
      const block = (label: string) => r.ctx.blocks.find((b) => b.label === label)?.data ?? "";
      expect(block("ResourceClaim allocation")).toContain("allocated devices: 1");
      expect(block("Pod volumes (no hostPath)")).toContain("no hostPath to /dev/nvidia*");
      expect(block("No-claim pod logs")).toBe(
        "no /dev/nvidia* device node is visible: this container has no GPU access",
      );
      expect(r.left).toEqual([]);
      expect(r.requests.length).toBeGreaterThan(10);
      expect(r.refused).toEqual([]);
    },
    T,
  );

  test(
    "secure-accelerator-access on nodes that leak GPUs to claim-less containers — failed, naming what the probe saw",
    async () => {
      leak.enabled = true;
      try {
        const r = await runCheck("secure-accelerator-access");
        expect(r.verdict.status).toBe("failed");
        expect(r.verdict.message).toMatch(
          /^a pod without a ResourceClaim sees GPU devices on node gpu-node-[12]: \/dev\/nvidia-uvm, \/dev\/nvidia0, \/dev\/nvidiactl \(expected none\)$/,
        );
        expect(r.ctx.blocks.map((b) => b.label)).toEqual(SECURE_BLOCKS);
        expect(r.left).toEqual([]);
      } finally {
        leak.enabled = false;
      }
    },
    T,
  );

  test(
    "dra-support with the driver's controller scaled to zero — failed: not available",
    async () => {
      await scaleDraControllerToZero(cluster());
      const r = await runCheck("dra-support");
      expect(r.verdict).toMatchObject({
        status: "failed",
        message:
          "Deployment nvidia-dra-driver/nvidia-dra-driver-gpu-controller is not available: 0 available replicas (expected at least 1)",
      });
      expect(r.ctx.blocks.map((b) => b.label)).toEqual(DRA_SUPPORT_BLOCKS.slice(0, 3));
      expect(r.left).toEqual([]);
    },
    T,
  );
});

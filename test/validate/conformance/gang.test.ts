/**
 * gang-scheduling against the real control plane, run in process as its catalog identity: the DRA driver
 * stand-in (test/cluster/dra.ts, 2 GPU nodes × 2 GPUs) and the KAI scheduler stand-in
 * (test/cluster/standins/kai.ts) — absent, healthy, and broken the ways the check must catch (a gang
 * bound only in part, bound 32 s apart, too few free GPUs, a Deployment not available). The probe pods
 * run dist/aicr (`aicr probe devices`) with the GPU of their own claim. One cluster, the stand-in moved
 * from absent to healthy to broken, so the tests run in this order.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { run } from "../../../src/validate/checks/gang-scheduling.ts";
import { installDraDriver } from "../../cluster/dra.ts";
import { adminClient } from "../../cluster/standins/_host.ts";
import { holdGpus, installKaiScheduler, KAI_NS, type KaiStandin } from "../../cluster/standins/kai.ts";
import { CLUSTER_HOOK_MS } from "../../cluster/testbed.ts";
import { useCluster } from "../../support/cluster.ts";
import { until } from "../../support/until.ts";
import { runCheck as runCheckAs } from "./_run-check.ts";
import { draNodes, standinCluster, untilNothingIn } from "./_standin-cluster.ts";

const POD_AND_CLAIM = [
  { apiVersion: "v1", kind: "Pod" },
  { apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim" },
];
const CREATED_KINDS = [...POD_AND_CLAIM, { apiVersion: "scheduling.run.ai/v2alpha2", kind: "PodGroup" }];
const T = 150_000;
const BLOCKS = [
  "KAI scheduler deployments",
  "KAI scheduler pods",
  "Gang Scheduling CRDs",
  "GPU Availability",
  "Apply test manifest",
  "PodGroup status",
  "Pod status",
  "gang-worker-0 logs",
  "gang-worker-1 logs",
  "Delete test namespace",
];

describe("[real] gang-scheduling", () => {
  let kai: KaiStandin | undefined;
  // Before useCluster's: the scheduler stops before the cluster does.
  afterAll(() => kai?.stop(), CLUSTER_HOOK_MS);
  const cluster = useCluster("real", { start: () => standinCluster(draNodes()) });
  beforeAll(() => installDraDriver(cluster()), CLUSTER_HOOK_MS);

  /** The check's whole run as its catalog identity (_run-check.ts), what it left of `kinds`. */
  const runCheck = (o: { waitScale?: number } = {}, kinds = CREATED_KINDS) =>
    runCheckAs(cluster(), "gang-scheduling", run, { ...o, kinds });

  test(
    "no KAI scheduler: skipped with the reason, nothing created",
    async () => {
      const r = await runCheck({}, POD_AND_CLAIM);
      expect(r.verdict).toMatchObject({
        status: "skipped",
        message:
          "the KAI scheduler is not installed: Deployment kai-scheduler/kai-scheduler-default not found",
      });
      expect(r.ctx.blocks).toEqual([]);
      expect(r.left).toEqual([]);
      expect(r.refused).toEqual([]);
    },
    T,
  );

  test(
    "a healthy KAI scheduler binds the 2-member PodGroup together; both pods see their claim's GPU — passed",
    async () => {
      kai = await installKaiScheduler(cluster());
      const r = await runCheck();
      expect(r.verdict.status, r.verdict.message).toBe("passed");
      expect(r.verdict.message).toMatch(
        /^PodGroup gang-group-\S+ \(minMember 2\): 2 pods scheduled by kai-scheduler within [01] s of each other \(allowed 30 s\), each got its GPU through its own ResourceClaim$/,
      );
      expect(r.ctx.blocks.map((b) => b.label)).toEqual(BLOCKS);
      const block = (label: string) => r.ctx.blocks.find((b) => b.label === label)?.data ?? "";
      expect(block("KAI scheduler deployments")).toContain("binder\tavailable 1/1");
      expect(block("Gang Scheduling CRDs")).toBe(
        "queues.scheduling.run.ai\tinstalled\npodgroups.scheduling.run.ai\tinstalled",
      );
      expect(block("GPU Availability")).toBe(
        "Total GPUs (gpu.nvidia.com ResourceSlices): 4\nAllocated by ResourceClaims: 0\nFree: 4\nRequired: 2",
      );
      expect(block("PodGroup status")).toContain("minMember 2, queue default-queue");
      expect(block("Pod status")).toContain("allowed window: 30 s");
      expect(block("gang-worker-0 logs")).toMatch(/1 GPU device node visible: \/dev\/nvidia[01]$/);
      expect(block("Delete test namespace")).toMatch(
        /^Pod\/gang-worker-0-\S+: deleted\nPod\/gang-worker-1-\S+: deleted\nResourceClaim\/gang-gpu-claim-0-\S+: deleted\nResourceClaim\/gang-gpu-claim-1-\S+: deleted\nPodGroup\/gang-group-\S+: deleted\n/,
      );
      expect(kai.bindings.filter((b) => b.pod.startsWith(r.ctx.testNamespace))).toHaveLength(2);
      expect(kai.errors).toEqual([]);
      expect(r.left).toEqual([]);
      expect(r.requests.length).toBeGreaterThan(10);
      expect(r.refused).toEqual([]);
    },
    T,
  );

  test(
    "a scheduler that binds only one member: the gang never finishes — failed (waits scaled)",
    async () => {
      if (!kai) throw new Error("the previous test installs the KAI stand-in");
      kai.gang = "onlyOne";
      try {
        const r = await runCheck({ waitScale: 0.03 });
        expect(r.verdict.status).toBe("failed");
        expect(r.verdict.message).toMatch(
          /^the gang's pods did not all finish within 9 s: gang-worker-0-\S+ \(phase \w+, node gpu-node-[12]\); gang-worker-1-\S+ \(phase Pending, node \(none\)\)$/,
        );
        expect(r.ctx.blocks.map((b) => b.label)).toEqual([...BLOCKS.slice(0, 7), "Delete test namespace"]);
        await untilNothingIn(cluster(), r.ctx.testNamespace, CREATED_KINDS);
      } finally {
        kai.gang = "together";
      }
    },
    T,
  );

  // A gang bound more than 30 s apart fails: the window's edges (30 s in, 31 s out) are the unit
  // tests' (test/unit/validate/checks/gang-scheduling.test.ts); here it would cost the suite 32 s.

  test(
    "fewer than 2 free GPUs: failed before anything is created",
    async () => {
      const release = await holdGpus(cluster(), 3);
      try {
        const r = await runCheck();
        expect(r.verdict).toMatchObject({
          status: "failed",
          message:
            "not enough free GPUs for the gang test: 1 free of 4 published by gpu.nvidia.com (3 allocated), 2 required",
        });
        expect(r.ctx.blocks.map((b) => b.label)).toEqual(BLOCKS.slice(0, 4));
        expect(r.left).toEqual([]);
        expect(r.requests.filter((e) => e.method === "POST")).toEqual([]);
      } finally {
        await release();
      }
    },
    T,
  );

  test(
    "a KAI Deployment not available (binder scaled to zero): failed, naming it",
    async () => {
      const client = adminClient(cluster());
      try {
        await client.mergePatch(
          { apiVersion: "apps/v1", kind: "Deployment", namespace: KAI_NS, name: "binder" },
          { spec: { replicas: 0 } },
        );
        await until(
          async () =>
            (
              await client.get<{ status?: { availableReplicas?: number } }>({
                apiVersion: "apps/v1",
                kind: "Deployment",
                namespace: KAI_NS,
                name: "binder",
              })
            ).status?.availableReplicas === undefined,
          "binder scaled to zero",
        );
      } finally {
        client.close();
      }
      const r = await runCheck();
      expect(r.verdict).toMatchObject({
        status: "failed",
        message: "KAI scheduler Deployment not available in namespace kai-scheduler: binder (0 available)",
      });
      expect(r.ctx.blocks.map((b) => b.label)).toEqual(BLOCKS.slice(0, 1));
      expect(r.left).toEqual([]);
    },
    T,
  );
});

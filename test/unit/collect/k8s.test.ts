import { describe, expect, test } from "bun:test";
import { collectK8s } from "../../../src/collect/_k8s.ts";
import { addPodImages, flattenSpec, parseImage, providerOf } from "../../../src/collect/_k8s-parse.ts";
import type { Readings } from "../../../src/collect/_types.ts";
import type { Json, V1Pod } from "../../../src/kube/types.ts";
import { FakeCluster, gpuNode } from "./_fake-cluster.ts";
import { captureLog, collectorOptions } from "./_helpers.ts";

function k8sOptions(cluster: FakeCluster, log = captureLog().log) {
  return { ...collectorOptions("/", { log }), cluster, nodeName: "gpu-node-07" };
}

describe("image parsing", () => {
  test.each([
    ["nvcr.io/nvidia/gpu-operator:v25.10.1", "gpu-operator", "v25.10.1"],
    ["nginx", "nginx", "latest"],
    ["nginx:1.27", "nginx", "1.27"],
    ["localhost:5000/team/app", "app", "latest"],
    ["localhost:5000/team/app:2.0", "app", "2.0"],
    ["registry.k8s.io/node-role-controller:v0.5.0@sha256:3456381", "node-role-controller", "v0.5.0"],
    ["quay.io/x/y@sha256:abcdef", "y", "latest"],
  ])("%s", (image, name, tag) => {
    expect(parseImage(image)).toEqual([name, tag]);
  });

  test("containers, init and ephemeral containers all count", () => {
    const pods: Json<V1Pod>[] = [
      {
        spec: {
          containers: [{ name: "plugin", image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.0" }],
          initContainers: [{ name: "init", image: "nvcr.io/nvidia/cuda:12.8.0-base-ubi9" }],
          ephemeralContainers: [{ name: "debug", image: "busybox" }],
        },
      },
      { spec: { containers: [{ name: "no-image" }] } },
      {},
    ];
    const out: Readings = {};
    addPodImages(pods, out);
    expect(out).toEqual({ "k8s-device-plugin": "v0.17.0", cuda: "12.8.0-base-ubi9", busybox: "latest" });
  });
});

describe("policy flattening", () => {
  test("nested maps → dotted keys, arrays → JSON, scalars → strings, empties and nulls dropped", () => {
    const out: Readings = {};
    flattenSpec(
      {
        driver: { enabled: true, version: "570.124.06", repoConfig: { configMapName: null } },
        toolkit: { env: [{ name: "CONTAINERD_SOCKET", value: "/run/containerd/containerd.sock" }] },
        mig: { strategy: "single" },
        dcgmExporter: { serviceMonitor: { interval: 15 } },
        daemonsets: { tolerations: [] },
      },
      "",
      out,
    );
    expect(out).toEqual({
      "driver.enabled": "true",
      "driver.version": "570.124.06",
      "toolkit.env": '[{"name":"CONTAINERD_SOCKET","value":"/run/containerd/containerd.sock"}]',
      "mig.strategy": "single",
      "dcgmExporter.serviceMonitor.interval": "15",
    });
  });

  test.each([
    ["aws:///us-west-2a/i-0123456789abcdef0", "eks"],
    ["gce://my-project/us-central1-a/gke-pool-1", "gke"],
    ["azure:///subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/virtualMachines/v", "aks"],
    ["oci://ocid1.instance.oc1.iad.abc", "oke"],
    ["ocid1.instance.oc1.iad.abc", "oke"],
    ["kind://docker/kind/kind-control-plane", "kind"],
  ])("provider of %s is %s", (id, provider) => {
    expect(providerOf(id)).toBe(provider);
  });
});

describe("K8s collector", () => {
  const cluster = (): FakeCluster =>
    new FakeCluster({
      version: { gitVersion: "v1.31.4-eks-2d5f260", platform: "linux/amd64", goVersion: "go1.22.9" },
      pods: Array.from({ length: 1250 }, (_, i) => ({
        spec: { containers: [{ name: "main", image: `repo/img-${i}:v1` }] },
      })),
      nodes: [gpuNode("gpu-node-07")],
      policies: [{ metadata: { name: "cluster-policy" }, spec: { driver: { enabled: true } } }],
    });

  test("server, image (all pages), policy and node, in that order", async () => {
    const fake = cluster();
    const m = await collectK8s(k8sOptions(fake));
    expect(m.subtypes.map((s) => s.subtype)).toEqual(["server", "image", "policy", "node"]);
    expect(m.subtypes[0]?.data).toEqual({
      version: "v1.31.4-eks-2d5f260",
      platform: "linux/amd64",
      goVersion: "go1.22.9",
    });
    expect(Object.keys(m.subtypes[1]?.data ?? {})).toHaveLength(1250);
    expect(fake.pageCalls.pods).toBe(3);
    expect(m.subtypes[2]?.data).toEqual({ "driver.enabled": "true" });
    expect(m.subtypes[3]?.data).toEqual({
      "source-node": "gpu-node-07",
      provider: "eks",
      "provider-id": "aws:///us-west-2a/i-011abc",
      "container-runtime-id": "containerd://1.7.24",
      "container-runtime-name": "containerd",
      "container-runtime-version": "1.7.24",
      "kubelet-version": "v1.31.4-eks-aeac579",
      "kernel-version": "6.1.119-129.201.amzn2023.x86_64",
      "operating-system": "linux",
      "os-image": "Amazon Linux 2023.6.20241212",
    });
  });

  test("a forbidden subtype is logged and left out; the others still arrive", async () => {
    const fake = cluster();
    fake.failures.policies = new Error(
      'clusterpolicies.nvidia.com is forbidden: User "system:serviceaccount:x:aicr" cannot list',
    );
    const { log, lines } = captureLog();
    const m = await collectK8s(k8sOptions(fake, log));
    expect(m.subtypes.map((s) => s.subtype)).toEqual(["server", "image", "node"]);
    const warn = lines.find((l) => l.level === "warn");
    expect(warn?.subtype).toBe("policy");
    expect(String(warn?.cause)).toContain("forbidden");
  });

  test("when no subtype can be read the collector fails", async () => {
    const fake = cluster();
    const down = new Error("connect ECONNREFUSED 10.96.0.1:443");
    fake.failures = { server: down, pods: down, node: down, policies: down };
    await expect(collectK8s(k8sOptions(fake))).rejects.toThrow("no K8s subtype could be read");
  });
});

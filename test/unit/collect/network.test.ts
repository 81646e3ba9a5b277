import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CustomObject } from "../../../src/collect/_k8s-source.ts";
import { collectNetwork } from "../../../src/collect/_network.ts";
import { nicClusterPolicySubtype, nicDevicesSubtype } from "../../../src/collect/_network-cluster.ts";
import { affinityOf } from "../../../src/collect/_network-group.ts";
import type { GpuPci, NicPf } from "../../../src/collect/_network-sysfs.ts";
import { collectAll } from "../../../src/collect/index.ts";
import { KubeClient } from "../../../src/kube/client.ts";
import { clusterReaderFor } from "../../../src/kube/cluster-reader.ts";
import type { Measurement, Subtype } from "../../../src/snapshot/schema.ts";
import { CLUSTER_HOOK_MS, startTestCluster, type TestCluster } from "../../cluster/testbed.ts";
import { requestsSince } from "../../support/requests.ts";
import { FakeCluster } from "./_fake-cluster.ts";
import { captureLog, collectorOptions, HOSTS, withTempDir } from "./_helpers.ts";
import { SAMPLE_CLUSTER_CONFIG } from "./_network-sample.ts";

const IB = join(HOSTS, "network-ib-node");
const ROCE = join(HOSTS, "network-roce-node");

const network = (hostRoot: string, extra: Partial<Parameters<typeof collectNetwork>[0]> = {}) =>
  collectNetwork({ ...collectorOptions(hostRoot), nodeName: "gpu-node-1", discover: true, ...extra });

const sub = (m: Measurement | undefined, name: string): Subtype => {
  const found = m?.subtypes.find((s) => s.subtype === name);
  if (!found) throw new Error(`no subtype ${name} in ${m?.subtypes.map((s) => s.subtype).join(", ")}`);
  return found;
};

describe("NetworkTopology from sysfs", () => {
  test("InfiniBand node: ConnectX-7 PFs grouped, ordered by PCI address, the onboard NIC apart", async () => {
    const m = await network(IB);
    expect(m?.type).toBe("NetworkTopology");
    expect(m?.subtypes.map((s) => s.subtype)).toEqual([
      "summary",
      "nic-15b3-1021-infiniband",
      "nic-8086-1521-ethernet",
      "gpu-nic-affinity",
    ]);
    expect(sub(m, "summary").data).toEqual({
      source: "sysfs",
      "pf-count": 5,
      "group-count": 2,
      fabrics: "ethernet,infiniband",
      "gpu-count": 4,
    });
    const ib = sub(m, "nic-15b3-1021-infiniband");
    expect(ib.data).toMatchObject({
      fabric: "infiniband",
      "pf-count": 4,
      model: "ConnectX-7",
      "kernel-module": "mlx5_core",
      "firmware-versions": "28.39.1002",
      "numa-nodes": "0,1",
      "link-layer": "InfiniBand",
      "ports-active": 4,
      "sriov-capable": true,
    });
    expect(ib.items?.map((i) => i.context?.["pci-address"])).toEqual([
      "0000:18:00.0",
      "0000:3d:00.0",
      "0000:9d:00.0",
      "0000:bd:00.0",
    ]);
    expect(ib.items?.[0]).toEqual({
      context: { "pci-address": "0000:18:00.0", netdev: "ibp24s0", "rdma-device": "mlx5_0" },
      data: {
        "vendor-id": "15b3",
        "device-id": "1021",
        "kernel-module": "mlx5_core",
        "numa-node": 0,
        "sriov-totalvfs": 16,
        "sriov-numvfs": 0,
        "speed-mbps": 400000,
        operstate: "up",
        "firmware-version": "28.39.1002",
        "board-id": "MT_0000000838",
        "node-guid": "a088:c203:000a:b0c0",
        "port-count": 1,
        "port-1.link-layer": "InfiniBand",
        "port-1.state": "ACTIVE",
        "port-1.rate": "400 Gb/sec (4X NDR)",
      },
    });
    // Virtual interfaces (lo, docker0) have no device and are not PFs.
    const all = m!.subtypes.flatMap((s) => s.items ?? []).map((i) => i.context?.netdev);
    expect(all).not.toContain("lo");
    expect(all).not.toContain("docker0");
    // Readings are scalars only.
    for (const s of m!.subtypes)
      for (const d of [s.data, ...(s.items ?? []).map((i) => i.data)])
        for (const v of Object.values(d)) expect(["string", "number", "boolean"]).toContain(typeof v);
  });

  test("InfiniBand node: each NIC shares a PCIe switch with its GPU", async () => {
    const affinity = sub(await network(IB), "gpu-nic-affinity");
    expect(affinity.data).toEqual({ "gpu-count": 4, "nic-count": 4, "nics-pcie-switch": 4 });
    expect(
      affinity.items?.map((i) => [i.context?.["rdma-device"], i.data["nearest-gpus"], i.data["numa-node"]]),
    ).toEqual([
      ["mlx5_0", "0000:19:00.0", 0],
      ["mlx5_1", "0000:3e:00.0", 0],
      ["mlx5_2", "0000:9e:00.0", 1],
      ["mlx5_3", "0000:be:00.0", 1],
    ]);
    expect(affinity.items?.[0]?.data["common-bridge"]).toBe("0000:16:00.0");
  });

  test("RoCE node: Ethernet link layer over RDMA is roce; VFs and virtual interfaces are skipped", async () => {
    const m = await network(ROCE);
    const roce = sub(m, "nic-15b3-1021-roce");
    expect(roce.data).toMatchObject({
      fabric: "roce",
      "pf-count": 2,
      "link-layer": "Ethernet",
      "ports-active": 1,
      "sriov-capable": true,
      "sriov-numvfs": 4,
    });
    expect(
      roce.items?.map((i) => [i.context?.netdev, i.data["sriov-numvfs"], i.data["port-1.state"]]),
    ).toEqual([
      ["enp24s0f0np0", 4, "ACTIVE"],
      ["enp24s0f1np1", 0, "DOWN"],
    ]);
    const names = JSON.stringify(m);
    for (const skipped of ["enp24s0f0v0", "mlx5_2", "0000:18:00.2", "veth1a2b", "cni0", "101e"])
      expect(names).not.toContain(skipped);
    expect(sub(m, "gpu-nic-affinity").data).toEqual({
      "gpu-count": 1,
      "nic-count": 2,
      "nics-host-bridge": 2,
    });
  });

  test("a host without NICs yields no measurement, not an empty one", async () => {
    expect(await network(join(HOSTS, "cpu-node"))).toBeUndefined();
    expect(await network(join(HOSTS, "h100-node"))).toBeUndefined();
    expect(await network(join(HOSTS, "no-such-host"))).toBeUndefined();
  });

  test("affinity falls back to NUMA node, then cross-NUMA, then unknown", () => {
    const nic: NicPf = {
      pci: "0000:01:00.0",
      rootComplex: "pci0000:00",
      bridges: [],
      numaNode: 0,
      ports: [],
    };
    const gpu = (rootComplex: string, numaNode?: number): GpuPci => ({
      pci: "0000:81:00.0",
      rootComplex,
      bridges: [],
      numaNode,
      deviceId: "2330",
    });
    expect(affinityOf(nic, gpu("pci0000:00")).relation).toBe("host-bridge");
    expect(affinityOf(nic, gpu("pci0000:80", 0)).relation).toBe("numa-node");
    expect(affinityOf(nic, gpu("pci0000:80", 1)).relation).toBe("cross-numa");
    expect(affinityOf(nic, gpu("pci0000:80")).relation).toBe("unknown");
  });
});

describe("collectAll gating", () => {
  const run = (env: Record<string, string>, hostRoot = IB) =>
    collectAll({ hostRoot, env, nodeName: "n", log: captureLog().log });

  test("only with AICR_DISCOVER_NETWORK=true or AICR_CLUSTER_CONFIG_PATH", async () => {
    expect((await run({})).map((m) => m.type)).not.toContain("NetworkTopology");
    expect((await run({ AICR_DISCOVER_NETWORK: "1" })).map((m) => m.type)).not.toContain("NetworkTopology");
    const types = (await run({ AICR_DISCOVER_NETWORK: "true" })).map((m) => m.type);
    expect(types.at(-1)).toBe("NetworkTopology");
    await withTempDir(async (dir) => {
      const config = join(dir, "cluster-config.yaml");
      await writeFile(config, SAMPLE_CLUSTER_CONFIG);
      const withConfig = await run({ AICR_CLUSTER_CONFIG_PATH: config }, join(HOSTS, "cpu-node"));
      const m = withConfig.find((x) => x.type === "NetworkTopology");
      expect(m?.subtypes.map((x) => x.subtype)).toEqual(["cluster-config", "cluster-config-group-0"]);
    });
  });

  test("a plain host with discovery on: no NetworkTopology and no warning", async () => {
    const { log, lines } = captureLog();
    const out = await collectAll({
      hostRoot: join(HOSTS, "cpu-node"),
      env: { AICR_DISCOVER_NETWORK: "true" },
      nodeName: "n",
      log,
    });
    expect(out.map((m) => m.type)).not.toContain("NetworkTopology");
    expect(lines.filter((l) => l.level === "warn" && String(l.collector) === "NetworkTopology")).toEqual([]);
  });
});

describe("NIC operator objects", () => {
  const devices: CustomObject[] = [
    {
      status: {
        node: "gpu-node-1",
        type: "1021",
        firmwareVersion: "28.39.1002",
        partNumber: "MCX75310AAS-NEAT",
        ports: [{}],
      },
    },
    {
      status: {
        node: "gpu-node-1",
        type: "1021",
        firmwareVersion: "28.39.1002",
        partNumber: "MCX75310AAS-NEAT",
        ports: [{}],
      },
    },
    { status: { node: "gpu-node-2", type: "1021", firmwareVersion: "28.40.1000", ports: [{}, {}] } },
  ];
  const policy: CustomObject = {
    metadata: { name: "nic-cluster-policy" },
    spec: {
      ofedDriver: { version: "doca3.1.0", image: "doca-driver" },
      nvIpam: { version: "v25.7.0" },
      tolerations: [],
    },
    status: { state: "ready" },
  };

  test("summarised as readings; this node's NicDevices counted", () => {
    expect(nicDevicesSubtype(devices, "gpu-node-1")).toEqual({
      subtype: "nic-devices",
      data: {
        count: 3,
        "node-count": 2,
        "this-node-count": 2,
        types: "1021",
        "part-numbers": "MCX75310AAS-NEAT",
        "firmware-versions": "28.39.1002,28.40.1000",
        "port-count": 4,
      },
    });
    expect(nicClusterPolicySubtype([policy])).toEqual({
      subtype: "nic-cluster-policy",
      data: {
        count: 1,
        "nic-cluster-policy.state": "ready",
        "nic-cluster-policy.components": "nvIpam,ofedDriver",
        "nic-cluster-policy.ofedDriver.version": "doca3.1.0",
        "nic-cluster-policy.nvIpam.version": "v25.7.0",
      },
    });
    expect(nicDevicesSubtype([], "n")).toBeUndefined();
  });

  test("read only with discovery; a failing read leaves that subtype out with a warning", async () => {
    const cluster = new FakeCluster({});
    Object.assign(cluster, {
      listNicDevices: async () => devices,
      listNicClusterPolicies: async () => {
        throw new Error("nicclusterpolicies.mellanox.com is forbidden");
      },
    });
    const { log, lines } = captureLog();
    const m = await network(IB, { cluster, log });
    expect(sub(m, "nic-devices").data.count).toBe(3);
    expect(m?.subtypes.map((s) => s.subtype)).not.toContain("nic-cluster-policy");
    expect(lines.some((l) => l.level === "warn" && l.msg.includes("NicClusterPolicy"))).toBe(true);
    const off = await network(IB, { cluster, discover: false });
    expect(off?.subtypes.map((s) => s.subtype)).not.toContain("nic-devices");
  });
});

describe("clusterReaderFor against the fake apiserver", () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster("fake", { controllers: false });
  }, CLUSTER_HOOK_MS);
  afterAll(() => cluster?.stop(), CLUSTER_HOOK_MS);

  test("NIC APIs not served: [] after discovery reads only, never an error", async () => {
    const client = KubeClient.connect({ kubeconfig: cluster.kubeconfigFor("admin"), env: {} });
    try {
      const before = cluster.log.entries.length;
      const reader = clusterReaderFor(client);
      expect(await reader.listNicDevices()).toEqual([]);
      expect(await reader.listNicClusterPolicies()).toEqual([]);
      const requests = requestsSince(cluster, before);
      expect(requests.length).toBeGreaterThan(0);
      for (const r of requests) expect(r).toMatch(/^GET \/apis$/);
    } finally {
      client.close();
    }
  });
});

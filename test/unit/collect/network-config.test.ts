import { describe, expect, test } from "bun:test";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { collectNetwork } from "../../../src/collect/_network.ts";
import { MAX_CLUSTER_CONFIG_VALUES, parseClusterConfig } from "../../../src/collect/_network-config.ts";
import { checkClusterConfigFile, MAX_CLUSTER_CONFIG_BYTES } from "../../../src/collect/index.ts";
import type { AicrError } from "../../../src/core/errors.ts";
import { rejection } from "../../support/reject.ts";
import { collectorOptions, HOSTS, withTempDir } from "./_helpers.ts";
import { SAMPLE_CLUSTER_CONFIG } from "./_network-sample.ts";

const rejected = (path: string): Promise<AicrError> => rejection(checkClusterConfigFile(path));

describe("checkClusterConfigFile", () => {
  test("reads the l8k shape; unknown fields are kept", async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, "cluster-config.yaml");
      await writeFile(path, SAMPLE_CLUSTER_CONFIG);
      const config = await checkClusterConfigFile(path);
      expect(config.clusterConfig?.[0]?.pfs).toHaveLength(2);
      expect((config as Record<string, unknown>).futureSection).toEqual({ someSetting: 42 });
    });
  });

  test("a missing file, a directory, a FIFO-like non-file and a file over 1 MiB are INVALID_REQUEST", async () => {
    await withTempDir(async (dir) => {
      const big = join(dir, "big.yaml");
      await writeFile(big, `a: "${"x".repeat(MAX_CLUSTER_CONFIG_BYTES)}"\n`);
      const cases: [string, string][] = [
        [join(dir, "missing.yaml"), "no such file"],
        [dir, "a directory, not a regular file"],
        [big, "above the 1 MiB limit"],
        ["", "is empty"],
      ];
      for (const [path, says] of cases) {
        const err = await rejected(path);
        expect(err.code).toBe("INVALID_REQUEST");
        expect(err.message).toContain("--cluster-config");
        expect(err.message).toContain(says);
        expect(err.remedy).toContain("l8k discover");
      }
    });
  });

  test("a symlink to a regular file is read (the target is what is checked)", async () => {
    await withTempDir(async (dir) => {
      await writeFile(join(dir, "real.yaml"), SAMPLE_CLUSTER_CONFIG);
      await symlink(join(dir, "real.yaml"), join(dir, "link.yaml"));
      expect((await checkClusterConfigFile(join(dir, "link.yaml"))).clusterConfig).toHaveLength(1);
    });
  });

  test("shape errors name every path", async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, "bad.yaml");
      await writeFile(
        path,
        [
          "clusterConfig:",
          "  - machineType: 7",
          "    capabilities: { nodes: { sriov: maybe } }",
          "    pfs:",
          "      - rail: -1",
          "        pciAddress: [1]",
          "    workerNodes: node-a",
        ].join("\n"),
      );
      const err = await rejected(path);
      expect(err.code).toBe("INVALID_REQUEST");
      for (const p of [
        "clusterConfig[0].machineType: expected a string",
        "clusterConfig[0].capabilities.nodes.sriov: expected true or false",
        "clusterConfig[0].pfs[0].rail",
        "clusterConfig[0].pfs[0].pciAddress: expected a string",
        "clusterConfig[0].workerNodes: expected a list of node names",
      ])
        expect(err.message).toContain(p);
    });
  });

  test("not YAML, or not a map, is INVALID_REQUEST", async () => {
    await withTempDir(async (dir) => {
      await writeFile(join(dir, "a.yaml"), "key: [unclosed\n");
      await writeFile(join(dir, "b.yaml"), "- just\n- a list\n");
      expect((await rejected(join(dir, "a.yaml"))).message).toContain("is not valid YAML");
      expect((await rejected(join(dir, "b.yaml"))).message).toContain("expected a map");
    });
  });
});

describe("cluster-config in NetworkTopology", () => {
  test("settings as dotted readings, each node group a subtype with its PFs as items", async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, "cluster-config.yaml");
      await mkdir(dir, { recursive: true });
      await writeFile(path, SAMPLE_CLUSTER_CONFIG);
      const m = await collectNetwork({
        ...collectorOptions(join(HOSTS, "cpu-node")),
        nodeName: "n",
        discover: false,
        clusterConfigPath: path,
      });
      const [settings, group] = m?.subtypes ?? [];
      expect(settings).toEqual({
        subtype: "cluster-config",
        context: { source: path },
        data: {
          "docaDriver.enable": true,
          "docaDriver.version": "doca3.5.0",
          flavor: "k8s",
          "futureSection.someSetting": 42,
          networkNamespaces: '["default"]',
          "networkOperator.componentVersion": "network-operator-v26.7.0",
          "networkOperator.namespace": "nvidia-network-operator",
          "networkOperator.repository": "nvcr.io/nvidia/mellanox",
          "networkOperator.version": "v26.7.0",
          "sriov.ethernetMtu": 9000,
          "sriov.numVfs": 8,
          "group-count": 1,
        },
      });
      expect(group?.subtype).toBe("cluster-config-group-0");
      expect(group?.context).toEqual({ index: "0", identifier: "rail-group-a" });
      expect(group?.data).toEqual({
        "capabilities.nodes.ib": true,
        "capabilities.nodes.rdma": true,
        "capabilities.nodes.sriov": true,
        linkType: "Infiniband",
        machineType: "DGX-H100",
        "nodeSelector.feature.node.kubernetes.io/pci-15b3.present": "true",
        "pf-count": 2,
        "worker-count": 2,
        "worker-nodes": "gpu-node-1,gpu-node-2",
      });
      expect(group?.items).toEqual([
        {
          context: { "pci-address": "0000:18:00.0", netdev: "ibp24s0", "rdma-device": "mlx5_0" },
          data: {
            deviceID: "1021",
            numaNode: 0,
            partNumber: "MCX75310AAS-NEAT",
            psid: "MT_0000000838",
            rail: 0,
            traffic: "east-west",
          },
        },
        {
          context: { "pci-address": "0000:3d:00.0", netdev: "ibp61s0", "rdma-device": "mlx5_1" },
          data: { deviceID: "1021", numaNode: 0, rail: 1, traffic: "east-west", vendorNote: "kept" },
        },
      ]);
    });
  });
});

test("a cluster-config of more values than MAX_CLUSTER_CONFIG_VALUES is refused before it becomes readings", () => {
  const many = `clusterConfig:\n  - identifier: a\nextra:\n${Array.from({ length: MAX_CLUSTER_CONFIG_VALUES + 1 }, (_, i) => `  k${i}: ${i}`).join("\n")}\n`;
  expect(() => parseClusterConfig(many, "c.yaml")).toThrow(
    `holds more than ${MAX_CLUSTER_CONFIG_VALUES} values`,
  );
});

/** `aicr snapshot --local` with network discovery, through the compiled binary, over fixture hosts. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { aicr, baseEnv, ROOT } from "./_aicr.ts";

const HOSTS = join(ROOT, "test/fixtures/hosts");

async function snapshotOf(host: string, env: Record<string, string> = { AICR_DISCOVER_NETWORK: "true" }) {
  const r = await aicr(["snapshot", "--local"], {
    env: baseEnv({ AICR_HOST_ROOT: join(HOSTS, host), ...env }),
  });
  expect(r.code, r.stderr).toBe(0);
  const doc = parseSnapshot(r.stdout, "stdout");
  return { doc, network: doc.measurements.find((m) => m.type === "NetworkTopology"), stderr: r.stderr };
}

describe("aicr snapshot --local with AICR_DISCOVER_NETWORK=true (compiled binary)", () => {
  test("an InfiniBand node: NetworkTopology with the ConnectX-7 group, its 4 PFs and GPU affinity", async () => {
    const { network } = await snapshotOf("network-ib-node");
    expect(network?.subtypes.map((s) => s.subtype)).toEqual([
      "summary",
      "nic-15b3-1021-infiniband",
      "nic-8086-1521-ethernet",
      "gpu-nic-affinity",
    ]);
    const ib = network?.subtypes[1];
    expect(ib?.data).toMatchObject({ fabric: "infiniband", "pf-count": 4, model: "ConnectX-7" });
    expect(ib?.items).toHaveLength(4);
    expect(network?.subtypes[3]?.data["nics-pcie-switch"]).toBe(4);
  });

  test("a RoCE node: the Ethernet-link-layer RDMA PFs as one roce group with their VF counts", async () => {
    const { network } = await snapshotOf("network-roce-node");
    const roce = network?.subtypes.find((s) => s.subtype === "nic-15b3-1021-roce");
    expect(roce?.data).toMatchObject({ fabric: "roce", "pf-count": 2, "sriov-numvfs": 4 });
    expect(roce?.items?.map((i) => i.context?.netdev)).toEqual(["enp24s0f0np0", "enp24s0f1np1"]);
  });

  test("a host without NICs: no NetworkTopology, and no warning about it", async () => {
    const { doc, network, stderr } = await snapshotOf("cpu-node");
    expect(network).toBeUndefined();
    expect(doc.measurements.length).toBeGreaterThan(0);
    expect(stderr).not.toContain("NetworkTopology");
  });

  test("without discovery: no NetworkTopology even on the InfiniBand node", async () => {
    const { network } = await snapshotOf("network-ib-node", {});
    expect(network).toBeUndefined();
  });
});

describe("the local flags (compiled binary)", () => {
  const CLUSTER_CONFIG = join(ROOT, "test/fixtures/network/cluster-config.yaml");

  test("--discover-network on the command line is the same as AICR_DISCOVER_NETWORK=true", async () => {
    const r = await aicr(["snapshot", "--local", "--discover-network"], {
      env: baseEnv({ AICR_HOST_ROOT: join(HOSTS, "network-ib-node") }),
    });
    expect(r.code, r.stderr).toBe(0);
    const network = parseSnapshot(r.stdout, "stdout").measurements.find((m) => m.type === "NetworkTopology");
    expect(network?.subtypes.map((s) => s.subtype)).toContain("nic-15b3-1021-infiniband");
  });

  test("--cluster-config: the file's settings and node groups join NetworkTopology, even on a host without NICs", async () => {
    const r = await aicr(["snapshot", "--local", "--cluster-config", CLUSTER_CONFIG], {
      env: baseEnv({ AICR_HOST_ROOT: join(HOSTS, "cpu-node") }),
    });
    expect(r.code, r.stderr).toBe(0);
    const network = parseSnapshot(r.stdout, "stdout").measurements.find((m) => m.type === "NetworkTopology");
    const config = network?.subtypes.find((s) => s.subtype === "cluster-config");
    expect(config?.data).toMatchObject({ flavor: "k8s", "networkOperator.version": "v26.7.0" });
    // A field aicr does not know is kept as a reading.
    expect(config?.data["futureSection.someSetting"]).toBe(42);
    const group = network?.subtypes.find((s) => s.subtype === "cluster-config-group-0");
    expect(group?.items).toHaveLength(2);
  });

  test("--cluster-config naming a missing file or a directory: exit 2 before anything is collected", async () => {
    for (const path of [join(HOSTS, "no-such.yaml"), HOSTS]) {
      const r = await aicr(["snapshot", "--local", "--cluster-config", path], {
        env: baseEnv({ AICR_HOST_ROOT: join(HOSTS, "cpu-node") }),
      });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain("--cluster-config");
      expect(r.stderr).not.toContain("collecting");
      expect(r.stdout).toBe("");
    }
  });
});

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

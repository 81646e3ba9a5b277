import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Measurement } from "../../../src/collect/_types.ts";
import { collectAll, hostRootFromEnv } from "../../../src/collect/index.ts";
import { AicrError } from "../../../src/core/errors.ts";
import { FakeCluster, gpuNode } from "./_fake-cluster.ts";
import { captureLog, HOSTS, pathWith } from "./_helpers.ts";

function find(ms: Measurement[], type: string, subtype: string): Record<string, unknown> | undefined {
  return ms.find((m) => m.type === type)?.subtypes.find((s) => s.subtype === subtype)?.data;
}

describe("collectAll", () => {
  test("node collectors only, in a stable order, without a cluster", async () => {
    const { log } = captureLog();
    const ms = await collectAll({
      hostRoot: join(HOSTS, "h100-node"),
      env: { PATH: pathWith("h100") },
      nodeName: "gpu-node-07",
      log,
    });
    expect(ms.map((m) => m.type)).toEqual(["GPU", "OS", "SystemD"]);
    expect(find(ms, "GPU", "smi")?.["gpu-count"]).toBe(8);
    expect(find(ms, "GPU", "hardware")?.model).toBe("h100");
    expect(find(ms, "OS", "release")?.VERSION_ID).toBe("24.04");
  });

  test("with a cluster: K8s first and NodeTopology last", async () => {
    const { log } = captureLog();
    const ms = await collectAll({
      hostRoot: join(HOSTS, "cpu-node"),
      env: { PATH: pathWith() },
      cluster: new FakeCluster({ nodes: [gpuNode("gpu-node-07"), gpuNode("gpu-node-08")] }),
      nodeName: "gpu-node-07",
      maxNodesPerEntry: 1,
      log,
    });
    expect(ms.map((m) => m.type)).toEqual(["K8s", "GPU", "OS", "SystemD", "NodeTopology"]);
    expect(find(ms, "NodeTopology", "label")?.["nvidia.com/gpu.present"]).toBe("true|gpu-node-07 (+1 more)");
    expect(find(ms, "SystemD", "containerd.service")).toBeUndefined();
  });

  test("a failing collector is logged by name and left out; the rest still arrive", async () => {
    const { log, lines } = captureLog();
    const cluster = new FakeCluster({});
    const down = new Error("connect ECONNREFUSED 10.96.0.1:443");
    cluster.failures = { server: down, pods: down, node: down, policies: down, nodes: down };
    const ms = await collectAll({
      hostRoot: join(HOSTS, "cpu-node"),
      env: { PATH: "" },
      cluster,
      nodeName: "n",
      log,
    });
    expect(ms.map((m) => m.type)).toEqual(["GPU", "OS", "SystemD"]);
    const failed = lines.filter((l) => l.msg.startsWith("collector failed"));
    expect(failed.map((l) => l.collector).sort()).toEqual(["K8s", "NodeTopology"]);
    expect(String(failed[0]?.cause)).toContain("ECONNREFUSED");
  });

  test("a collector past its own timeout is left out with a warning", async () => {
    const { log, lines } = captureLog();
    const ms = await collectAll({
      hostRoot: join(HOSTS, "cpu-node"),
      env: { PATH: pathWith("hanging") },
      nodeName: "n",
      log,
      timeouts: { GPU: 100 },
    });
    expect(ms.map((m) => m.type)).toEqual(["OS", "SystemD"]);
    const warn = lines.find((l) => l.collector === "GPU");
    expect(String(warn?.cause)).toContain("timed out after 100 ms");
  });

  test("cancelling the whole collection is an error (CANCELED), not an empty snapshot", async () => {
    const controller = new AbortController();
    const run = collectAll({
      hostRoot: join(HOSTS, "cpu-node"),
      env: { PATH: pathWith("hanging") },
      nodeName: "n",
      log: captureLog().log,
      signal: controller.signal,
    });
    controller.abort(new Error("interrupted"));
    const err = await run.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AicrError);
    expect((err as AicrError).code).toBe("CANCELED");
  });

  test("AICR_HOST_ROOT selects the host root, default /", () => {
    expect(hostRootFromEnv({})).toBe("/");
    expect(hostRootFromEnv({ AICR_HOST_ROOT: "/host" })).toBe("/host");
  });
});

describe("collectAll on this machine (host root /)", () => {
  test("OS release, grub and sysctl are populated; smi reports no GPU", async () => {
    const { log } = captureLog();
    const ms = await collectAll({
      hostRoot: "/",
      env: { PATH: process.env.PATH ?? "" },
      nodeName: "local",
      log,
    });
    expect(Object.keys(find(ms, "OS", "release") ?? {})).toContain("ID");
    expect(Object.keys(find(ms, "OS", "grub") ?? {}).length).toBeGreaterThan(0);
    const sysctl = find(ms, "OS", "sysctl") ?? {};
    expect(typeof sysctl["/proc/sys/kernel/osrelease"]).toBe("string");
    expect(Object.keys(sysctl).some((k) => k.startsWith("/proc/sys/net/"))).toBe(false);
    // A kernel built without module support has no /proc/modules; then kmod is absent, not empty.
    const kmod = find(ms, "OS", "kmod");
    if (existsSync("/proc/modules")) expect(kmod).toBeDefined();
    else expect(kmod).toBeUndefined();
    expect(find(ms, "GPU", "smi")?.["gpu-count"]).toBe(0);
    // PCI sysfs may be absent in a sandbox; when present it must agree that there is no GPU.
    const hardware = find(ms, "GPU", "hardware");
    if (existsSync("/sys/bus/pci/devices")) expect(hardware?.["gpu-count"]).toBe(0);
    else expect(hardware).toBeUndefined();
    expect(ms.find((m) => m.type === "SystemD")).toBeDefined();
  });
});

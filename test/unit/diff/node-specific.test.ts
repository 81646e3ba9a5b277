import { describe, expect, test } from "bun:test";
import { readingKey } from "../../../src/diff/fleet.ts";
import {
  isNodeSpecificByValue,
  isNodeSpecificPath,
  looksLikeIdentity,
} from "../../../src/diff/node-specific.ts";

describe("the node-specific rule", () => {
  test("by path: identity readings, per-boot values, counters and NodeTopology", () => {
    for (const path of [
      "OS.sysctl./proc/sys/kernel/hostname",
      "OS.sysctl./proc/sys/kernel/random/uuid",
      "OS.sysctl./proc/sys/kernel/random/boot_id",
      "OS.sysctl./proc/sys/fs/file-nr",
      "K8s.node.source-node",
      "K8s.node.provider-id",
      'K8s.node["context.node"]',
      "NetworkTopology.group-0.items[3].context.pci-address",
      "NetworkTopology.group-0.items[0].data.node-guid",
      "GPU.smi.gpu.serial",
      "GPU.smi.gpu.uuid",
      "NodeTopology.label.kubernetes.io/hostname.gpu-1",
      "NodeTopology.summary.node-count",
      "K8s.labels.kubernetes.io/hostname",
    ])
      expect(isNodeSpecificPath(path)).toBe(true);
  });

  test("by path: settings are compared", () => {
    for (const path of [
      "OS.sysctl./proc/sys/kernel/osrelease",
      "OS.sysctl./proc/sys/kernel/random/poolsize",
      "K8s.node.kubelet-version",
      "GPU.smi.driver",
      "NetworkTopology.group-0.items[0].data.firmware-version",
      "OS.release.VERSION_ID",
    ])
      expect(isNodeSpecificPath(path)).toBe(false);
  });

  test("identity shapes: the node's own name, UUIDs, GUIDs, MAC and PCI addresses, lists of them", () => {
    expect(looksLikeIdentity("gpu-1", "gpu-1")).toBe(true);
    expect(looksLikeIdentity("gpu-1.ec2.internal", "gpu-1")).toBe(true);
    expect(looksLikeIdentity("gpu-1", "gpu-1.ec2.internal")).toBe(true);
    expect(looksLikeIdentity("gpu-2", "gpu-1")).toBe(false);
    expect(looksLikeIdentity("3f2b8a52-5a0e-4d4b-9c1e-0d6f1e2a3b4c", "n")).toBe(true);
    expect(looksLikeIdentity("GPU-3f2b8a52-5a0e-4d4b-9c1e-0d6f1e2a3b4c", "n")).toBe(true);
    expect(looksLikeIdentity("0c42:a103:00b4:1a2c", "n")).toBe(true);
    expect(looksLikeIdentity("0x0c42a10300b41a2c", "n")).toBe(true);
    expect(looksLikeIdentity("b8:3f:d2:11:22:33", "n")).toBe(true);
    expect(looksLikeIdentity("0000:1b:00.0", "n")).toBe(true);
    expect(looksLikeIdentity("0000:1b:00.0, 0000:43:00.0", "n")).toBe(true);
    expect(looksLikeIdentity("6.8.0-1017-nvidia", "n")).toBe(false);
    expect(looksLikeIdentity("570.124.06", "n")).toBe(false);
    expect(looksLikeIdentity("", "n")).toBe(false);
    expect(looksLikeIdentity(8, "n")).toBe(false);
    expect(looksLikeIdentity(true, "n")).toBe(false);
  });

  test("by value: different on every node and identity-shaped", () => {
    const own = [
      { node: "a", value: "a.internal" },
      { node: "b", value: "b.internal" },
    ];
    expect(isNodeSpecificByValue(own, readingKey)).toBe(true);
    // Two nodes, two kernels: different everywhere, but a version is no identity.
    const kernels = [
      { node: "a", value: "6.8.0-1017" },
      { node: "b", value: "6.8.0-1020" },
    ];
    expect(isNodeSpecificByValue(kernels, readingKey)).toBe(false);
    // The same address on two nodes is not unique per node: drift, not identity.
    const shared = [
      { node: "a", value: "0000:1b:00.0" },
      { node: "b", value: "0000:1b:00.0" },
      { node: "c", value: "0000:43:00.0" },
    ];
    expect(isNodeSpecificByValue(shared, readingKey)).toBe(false);
    // One node's value names another node: not its own identity.
    const crossed = [
      { node: "a", value: "b" },
      { node: "b", value: "a" },
    ];
    expect(isNodeSpecificByValue(crossed, readingKey)).toBe(false);
    expect(isNodeSpecificByValue([], readingKey)).toBe(false);
  });
});

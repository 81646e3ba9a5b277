/** Provider dumps (as each cloud CLI prints them) → K8s readings; merge into the K8s measurement. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { mergeK8sSubtypes, projectProvider } from "../../../src/snapshot/_providers.ts";
import type { Snapshot } from "../../../src/snapshot/schema.ts";
import { thrown } from "../../support/reject.ts";

const FIXTURES = join(import.meta.dir, "../../fixtures/providers");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");

const doc = (measurements: Snapshot["measurements"]): Snapshot => ({
  apiVersion: "aicr.run/v1",
  kind: "Snapshot",
  metadata: { timestamp: "2026-01-31T10:30:00Z", version: "0.1.0", "source-node": "n1" },
  measurements,
});

describe("provider projections", () => {
  test("oke: the NvidiaGpuPlugin add-on's lifecycle state and installed version", () => {
    expect(projectProvider("oke-addons", fixture("oke-addons.json"), "oke.json")).toEqual({
      subtype: "oke-addons",
      data: { "nvidia-gpu-plugin": "ACTIVE", "nvidia-gpu-plugin-version": "v0.15.0" },
    });
  });

  test("oke: no such add-on → not-installed", () => {
    const s = projectProvider("oke-addons", JSON.stringify({ data: [] }), "x");
    expect(s.data).toEqual({ "nvidia-gpu-plugin": "not-installed" });
  });

  test("aks: GPU pools only (gpuProfile or an N-series size); unset driver is AKS's default Install", () => {
    expect(projectProvider("aks-gpu-pools", fixture("aks-gpu-pools.json"), "aks.json").data).toEqual({
      "gpu-driver": "Install,None",
      "gpu-driver.gpua10": "Install",
      "gpu-driver.gpuh100": "None",
      "gpu-pool-count": 2,
    });
  });

  test("aks: no GPU pool → only gpu-pool-count 0", () => {
    const s = projectProvider(
      "aks-gpu-pools",
      JSON.stringify([{ name: "sys", vmSize: "Standard_D4s_v5" }]),
      "x",
    );
    expect(s.data).toEqual({ "gpu-pool-count": 0 });
  });

  test("gke: pools with accelerators; their gpuDriverVersion", () => {
    expect(projectProvider("gke-gpu-pools", fixture("gke-gpu-pools.json"), "gke.json").data).toEqual({
      "gpu-driver-installation": "LATEST",
      "gpu-driver-installation.h100-pool": "LATEST",
      "gpu-pool-count": 1,
    });
  });

  test("gke: an accelerator without gpuDriverInstallationConfig reads unset", () => {
    const pools = [
      { name: "p", config: { accelerators: [{ acceleratorCount: "1", acceleratorType: "nvidia-l4" }] } },
    ];
    expect(projectProvider("gke-gpu-pools", JSON.stringify(pools), "x").data["gpu-driver-installation"]).toBe(
      "unset",
    );
  });

  test("bad JSON or the wrong shape is INVALID_REQUEST naming the flag and the command", () => {
    const cases: [Parameters<typeof projectProvider>[0], string][] = [
      ["oke-addons", "{"],
      ["oke-addons", "[1]"],
      ["aks-gpu-pools", "{}"],
      ["gke-gpu-pools", '[{"config":{}}]'],
    ];
    for (const [kind, text] of cases) {
      const err = thrown(() => projectProvider(kind, text, "f.json"));
      expect(err.code).toBe("INVALID_REQUEST");
      expect(err.message).toContain(`--${kind} "f.json"`);
    }
  });
});

describe("mergeK8sSubtypes", () => {
  const extra = { subtype: "oke-addons", data: { "nvidia-gpu-plugin": "ACTIVE" } };

  test("creates the K8s measurement first when absent", () => {
    const merged = mergeK8sSubtypes(doc([{ type: "GPU", subtypes: [] }]), [extra]);
    expect(merged.measurements.map((m) => m.type)).toEqual(["K8s", "GPU"]);
    expect(merged.measurements[0]?.subtypes).toEqual([extra]);
  });

  test("appends to an existing K8s measurement, replacing a subtype of the same name; input unchanged", () => {
    const input = doc([
      {
        type: "K8s",
        subtypes: [
          { subtype: "server", data: { version: "v1.31.0" } },
          { subtype: "oke-addons", data: {} },
        ],
      },
    ]);
    const merged = mergeK8sSubtypes(input, [extra]);
    expect(merged.measurements[0]?.subtypes.map((s) => s.subtype)).toEqual(["server", "oke-addons"]);
    expect(merged.measurements[0]?.subtypes[1]).toEqual(extra);
    expect(input.measurements[0]?.subtypes[1]?.data).toEqual({});
  });
});

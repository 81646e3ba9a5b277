import { describe, expect, test } from "bun:test";
import { buildSnapshotConfigMap, labelSafeVersion } from "../../../src/snapshot/_configmap.ts";

describe("buildSnapshotConfigMap", () => {
  test("labels and data keys for YAML", () => {
    const cm = buildSnapshotConfigMap(
      { namespace: "gpu-operator", name: "aicr-snapshot" },
      {
        content: "apiVersion: aicr.run/v1\n",
        format: "yaml",
        timestamp: "2026-11-29T10:30:00Z",
        version: "v0.1.0",
      },
    );
    expect(cm).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "aicr-snapshot",
        namespace: "gpu-operator",
        labels: {
          "app.kubernetes.io/name": "aicr",
          "app.kubernetes.io/component": "Snapshot",
          "app.kubernetes.io/version": "v0.1.0",
        },
      },
      data: {
        "snapshot.yaml": "apiVersion: aicr.run/v1\n",
        format: "yaml",
        timestamp: "2026-11-29T10:30:00Z",
      },
    });
  });

  test("JSON uses snapshot.json", () => {
    const cm = buildSnapshotConfigMap(
      { namespace: "n", name: "c" },
      { content: "{}\n", format: "json", timestamp: "t", version: "v" },
    );
    expect(Object.keys(cm.data)).toEqual(["snapshot.json", "format", "timestamp"]);
    expect(cm.data.format).toBe("json");
  });

  test.each([
    ["v0.1.0", "v0.1.0"],
    ["0.1.0+dirty", "0.1.0-dirty"],
    ["", "unknown"],
    ["+++", "unknown"],
    ["v1.0.0-rc.1", "v1.0.0-rc.1"],
    [`v${"1".repeat(80)}`, `v${"1".repeat(62)}`],
  ])("version %p becomes label value %p", (version, label) => {
    expect(labelSafeVersion(version)).toBe(label);
  });
});

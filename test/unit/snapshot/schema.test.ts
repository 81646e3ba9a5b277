import { describe, expect, test } from "bun:test";
import { AicrError } from "../../../src/core/errors.ts";
import { parseSnapshot, type Snapshot } from "../../../src/snapshot/schema.ts";

const VALID: Snapshot = {
  apiVersion: "aicr.run/v1",
  kind: "Snapshot",
  metadata: {
    timestamp: "2026-11-29T10:30:00Z",
    version: "v0.1.0",
    "source-node": "gpu-node-07",
    "run-id": "r1",
  },
  measurements: [
    { type: "GPU", subtypes: [{ subtype: "smi", data: { "gpu-count": 8, driver: "570.124.06" } }] },
    {
      type: "OS",
      subtypes: [{ subtype: "release", data: { ID: "ubuntu", VERSION_ID: "24.04" }, context: { a: "b" } }],
    },
  ],
};

function problems(text: string): string[] {
  try {
    parseSnapshot(text, "snap.yaml");
  } catch (err) {
    expect(err).toBeInstanceOf(AicrError);
    expect((err as AicrError).code).toBe("INVALID_REQUEST");
    return (err as AicrError).context.problems as string[];
  }
  throw new Error("expected parseSnapshot to fail");
}

function withChange(change: (doc: Record<string, any>) => void): string {
  const doc = structuredClone(VALID) as Record<string, any>;
  change(doc);
  return JSON.stringify(doc);
}

describe("parseSnapshot", () => {
  test("reads JSON and YAML alike", () => {
    expect(parseSnapshot(JSON.stringify(VALID), "a.json")).toEqual(VALID);
    const yaml = [
      "apiVersion: aicr.run/v1",
      "kind: Snapshot",
      "metadata:",
      '  timestamp: "2026-11-29T10:30:00Z"',
      "  version: v0.1.0",
      "  source-node: gpu-node-07",
      "measurements:",
      "  - type: OS",
      "    subtypes:",
      "      - subtype: release",
      "        data:",
      "          ID: ubuntu",
      '          VERSION_ID: "24.04"',
      "          fips: false",
    ].join("\n");
    const doc = parseSnapshot(yaml, "a.yaml");
    expect(doc.measurements[0]?.subtypes[0]?.data).toEqual({
      ID: "ubuntu",
      VERSION_ID: "24.04",
      fips: false,
    });
  });

  test("a non-scalar reading is reported by its path", () => {
    const text = withChange((d) => {
      d.measurements[1].subtypes[0].data["gpu-count"] = { nested: 1 };
    });
    expect(problems(text)).toEqual([
      "measurements[1].subtypes[0].data.gpu-count: expected a string, number or boolean",
    ]);
  });

  test("every problem is listed, each with its path", () => {
    const text = withChange((d) => {
      d.apiVersion = "aicr.nvidia.com/v1alpha1";
      d.metadata.timestamp = "yesterday";
      d.measurements[0].type = "Gpu";
      d.measurements[1].subtypes[0].data["/proc/sys/kernel/osrelease"] = null;
      d.measurements[1].subtypes[0].context = { n: 1 };
      d.measurements[0].subtypes[0].extra = true;
    });
    expect(problems(text)).toEqual([
      'apiVersion: expected "aicr.run/v1"',
      "metadata.timestamp: expected a UTC RFC 3339 timestamp such as 2026-01-31T10:30:00Z",
      "measurements[0].type: expected one of K8s, GPU, OS, SystemD, NodeTopology, NetworkTopology",
      "measurements[0].subtypes[0].extra: unknown key",
      'measurements[1].subtypes[0].data["/proc/sys/kernel/osrelease"]: expected a string, number or boolean',
      "measurements[1].subtypes[0].context.n: expected a map of strings",
    ]);
  });

  test("a measurement type may appear once", () => {
    const text = withChange((d) => {
      d.measurements.push({ type: "GPU", subtypes: [] });
    });
    expect(problems(text)).toEqual([
      'measurements[2].type: type "GPU" already appears at measurements[0]; each type may appear once',
    ]);
  });

  test("missing envelope fields", () => {
    const text = withChange((d) => {
      delete d.kind;
      delete d.metadata["source-node"];
      d.measurements = {};
    });
    expect(problems(text)).toEqual([
      "kind: required but missing",
      "metadata.source-node: required but missing",
      "measurements: expected a list of measurements",
    ]);
  });

  test("empty input, a bare scalar and broken YAML are INVALID_REQUEST naming the source", () => {
    expect(problems("")).toEqual([
      "(document): expected a snapshot document (a map with apiVersion, kind, metadata, measurements)",
    ]);
    expect(problems("42")).toHaveLength(1);
    expect(() => parseSnapshot("a: [1, 2", "broken.yaml")).toThrow(
      'Snapshot "broken.yaml" is not valid YAML or JSON',
    );
  });

  test("the message names the source and counts the problems", () => {
    const text = withChange((d) => {
      d.kind = "Recipe";
    });
    expect(() => parseSnapshot(text, "snap.yaml")).toThrow(
      'Snapshot "snap.yaml" does not match aicr.run/v1 Snapshot: 1 problem(s):\n  kind: expected "Snapshot"',
    );
  });
});

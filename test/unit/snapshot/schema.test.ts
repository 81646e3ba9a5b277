import { describe, expect, test } from "bun:test";
import { parseSnapshot, type Snapshot } from "../../../src/snapshot/schema.ts";
import { thrown } from "../../support/reject.ts";

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
  const err = thrown(() => parseSnapshot(text, "snap.yaml"));
  expect(err.code).toBe("INVALID_REQUEST");
  return err.context.problems as string[];
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
      d.apiVersion = "aicr.nvidia.com/v1alpha2";
      d.metadata.timestamp = "yesterday";
      d.measurements[0].type = "Gpu";
      d.measurements[1].subtypes[0].data["/proc/sys/kernel/osrelease"] = null;
      d.measurements[1].subtypes[0].context = { n: 1 };
      d.measurements[0].subtypes[0].extra = true;
    });
    expect(problems(text)).toEqual([
      'apiVersion: expected "aicr.run/v1" or "aicr.nvidia.com/v1alpha1"',
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

// The original's CLI test fixture (tests/chainsaw/cli/cuj1-training/mock-snapshot.yaml), as the facts show it.
const MINIMAL = [
  "measurements:",
  "  - type: K8s",
  "    subtypes:",
  "      - subtype: server",
  "        data:",
  "          version: v1.33.0",
  "      - subtype: helm",
  "        data:",
  "          gpu-operator.chart: gpu-operator",
  "          gpu-operator.version: v25.10.1",
  "          gpu-operator.namespace: gpu-operator",
  "  - type: OS",
  "    subtypes:",
  "      - subtype: release",
  "        data:",
  "          ID: ubuntu",
  '          VERSION_ID: "24.04"',
].join("\n");

const ORIGINAL_ENVELOPE = [
  "apiVersion: aicr.run/v1",
  "kind: Snapshot",
  "metadata:",
  '  timestamp: "2025-12-31T10:30:00Z"',
  "  version: v1.0.0",
  "  source-node: gpu-node-1",
].join("\n");

describe("the original's documents", () => {
  test("measurements alone: read as an aicr.run/v1 Snapshot, the missing envelope told once", () => {
    const told: string[] = [];
    const doc = parseSnapshot(MINIMAL, "mock-snapshot.yaml", { onEnvelopeMissing: (s) => told.push(s) });
    expect(told).toEqual(["mock-snapshot.yaml"]);
    expect(doc.apiVersion).toBe("aicr.run/v1");
    expect(doc.kind).toBe("Snapshot");
    expect(doc.metadata).toEqual({});
    expect(doc.measurements.map((m) => m.type)).toEqual(["K8s", "OS"]);
    expect(doc.measurements[0]?.subtypes[1]).toEqual({
      subtype: "helm",
      data: {
        "gpu-operator.chart": "gpu-operator",
        "gpu-operator.version": "v25.10.1",
        "gpu-operator.namespace": "gpu-operator",
      },
    });
    expect(doc.measurements[1]?.subtypes[0]?.data.VERSION_ID).toBe("24.04");
  });

  test("the native reader says the same", () => {
    const told: string[] = [];
    const doc = parseSnapshot(MINIMAL, "x", { native: true, onEnvelopeMissing: (s) => told.push(s) });
    expect(doc).toEqual(parseSnapshot(MINIMAL, "x"));
    expect(told).toEqual(["x"]);
  });

  test("a full envelope is not reported missing", () => {
    const told: string[] = [];
    const doc = parseSnapshot(`${ORIGINAL_ENVELOPE}\n${MINIMAL}`, "full.yaml", {
      onEnvelopeMissing: (s) => told.push(s),
    });
    expect(told).toEqual([]);
    expect(doc.metadata["source-node"]).toBe("gpu-node-1");
  });

  test("v0.11.1's apiVersion aicr.nvidia.com/v1alpha1 reads as written", () => {
    const text = `${ORIGINAL_ENVELOPE.replace("aicr.run/v1", "aicr.nvidia.com/v1alpha1")}\n${MINIMAL}`;
    expect(parseSnapshot(text, "old.yaml").apiVersion).toBe("aicr.nvidia.com/v1alpha1");
  });

  test("the latest GPU hardware subtype, items records and provider projections are kept", () => {
    const text = [
      ORIGINAL_ENVELOPE,
      "measurements:",
      "  - type: GPU",
      "    subtypes:",
      "      - subtype: hardware",
      "        data:",
      "          gpu-present: true",
      "          gpu-count: 2",
      "          driver-loaded: false",
      "          detection-source: nfd",
      "  - type: K8s",
      "    subtypes:",
      "      - subtype: aks-gpu-pools",
      "        data: {gpu-driver: Install}",
      "      - subtype: oke-addons",
      "        data: {nvidia-gpu-plugin: ENABLED}",
      "      - subtype: gke-gpu-pools",
      "        data: {gpu-driver-installation: LATEST}",
      "      - subtype: slinky-slurm",
      "        data: {controller: ready}",
      "  - type: NetworkTopology",
      "    subtypes:",
      "      - subtype: group-0",
      "        context: {fabric: infiniband}",
      "        data: {pf-count: 8}",
      "        items:",
      "          - context: {pf: mlx5_0}",
      "            data: {link: up, speed: 400}",
      "          - data: {link: down}",
    ].join("\n");
    const doc = parseSnapshot(text, "latest.yaml");
    expect(doc.measurements[0]?.subtypes[0]?.data).toEqual({
      "gpu-present": true,
      "gpu-count": 2,
      "driver-loaded": false,
      "detection-source": "nfd",
    });
    expect(doc.measurements[1]?.subtypes.map((s) => s.subtype)).toEqual([
      "aks-gpu-pools",
      "oke-addons",
      "gke-gpu-pools",
      "slinky-slurm",
    ]);
    expect(doc.measurements[2]?.subtypes[0]).toEqual({
      subtype: "group-0",
      context: { fabric: "infiniband" },
      data: { "pf-count": 8 },
      items: [{ context: { pf: "mlx5_0" }, data: { link: "up", speed: 400 } }, { data: { link: "down" } }],
    });
  });

  test("the original's JSON nulls for an empty collector read as empty", () => {
    const text = JSON.stringify({
      apiVersion: "aicr.run/v1",
      kind: "Snapshot",
      metadata: { timestamp: "2025-12-31T10:30:00Z", version: "v1.0.0", "source-node": "n" },
      measurements: [
        { type: "SystemD", subtypes: null },
        { type: "K8s", subtypes: [{ subtype: "policy", data: null, context: null, items: null }] },
      ],
    });
    expect(parseSnapshot(text, "x.json").measurements).toEqual([
      { type: "SystemD", subtypes: [] },
      { type: "K8s", subtypes: [{ subtype: "policy", data: {} }] },
    ]);
  });

  test("without an envelope, structural problems are still listed by path", () => {
    const text = MINIMAL.replace("subtype: server", "name: server").replace("type: OS", "type: Os");
    expect(problems(text)).toEqual([
      "measurements[0].subtypes[0].subtype: required but missing",
      "measurements[0].subtypes[0].name: unknown key",
      "measurements[1].type: expected one of K8s, GPU, OS, SystemD, NodeTopology, NetworkTopology",
    ]);
    expect(problems("{}")).toEqual(["measurements: required but missing"]);
    expect(problems("measurements: []\nextra: 1")).toEqual(["extra: unknown key"]);
  });

  test("half an envelope is an error, not a missing one", () => {
    expect(problems(`kind: Snapshot\n${MINIMAL}`)).toEqual([
      "apiVersion: required but missing",
      "metadata: required but missing",
    ]);
  });

  test("the retired v1alpha2/v1alpha3 stay refused", () => {
    for (const api of ["aicr.nvidia.com/v1alpha2", "aicr.nvidia.com/v1alpha3"]) {
      expect(problems(`${ORIGINAL_ENVELOPE.replace("aicr.run/v1", api)}\n${MINIMAL}`)).toEqual([
        'apiVersion: expected "aicr.run/v1" or "aicr.nvidia.com/v1alpha1"',
      ]);
    }
  });
});

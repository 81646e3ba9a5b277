import { describe, expect, test } from "bun:test";
import { AicrError } from "../../../src/core/errors.ts";
import {
  buildSnapshot,
  formatTimestamp,
  provenanceFromEnv,
  sourceNodeFromEnv,
} from "../../../src/snapshot/_build.ts";
import type { Measurement } from "../../../src/snapshot/schema.ts";

const NOW = new Date("2026-11-29T10:30:00.123Z");
const MEASUREMENTS: Measurement[] = [
  { type: "GPU", subtypes: [{ subtype: "smi", data: { driver: "570.124.06", "gpu-count": 8 } }] },
  {
    type: "OS",
    subtypes: [
      { subtype: "release", data: { VERSION_ID: "24.04", ID: "ubuntu" } },
      { subtype: "grub", data: { quiet: "", console: "ttyS0" }, context: { z: "1", a: "2" } },
    ],
  },
];

describe("buildSnapshot", () => {
  test("envelope, metadata and provenance", () => {
    const doc = buildSnapshot({
      measurements: MEASUREMENTS,
      version: "v0.1.0",
      sourceNode: "gpu-node-07",
      now: NOW,
      provenance: { runId: "20261129-103000-ab12cd34ef56ab78", podUid: "pod-uid-1", jobUid: "" },
    });
    expect(doc.apiVersion).toBe("aicr.run/v1");
    expect(doc.kind).toBe("Snapshot");
    expect(doc.metadata).toEqual({
      timestamp: "2026-11-29T10:30:00Z",
      version: "v0.1.0",
      "source-node": "gpu-node-07",
      "run-id": "20261129-103000-ab12cd34ef56ab78",
      "pod-uid": "pod-uid-1",
    });
  });

  test("keeps measurement and subtype order, sorts keys inside data and context", () => {
    const doc = buildSnapshot({ measurements: MEASUREMENTS, version: "v", sourceNode: "n", now: NOW });
    expect(doc.measurements.map((m) => m.type)).toEqual(["GPU", "OS"]);
    expect(doc.measurements[1]?.subtypes.map((s) => s.subtype)).toEqual(["release", "grub"]);
    expect(Object.keys(doc.measurements[1]?.subtypes[0]?.data ?? {})).toEqual(["ID", "VERSION_ID"]);
    expect(Object.keys(doc.measurements[1]?.subtypes[1]?.context ?? {})).toEqual(["a", "z"]);
  });

  test("same input, same document; the input is not modified", () => {
    const before = structuredClone(MEASUREMENTS);
    const a = buildSnapshot({ measurements: MEASUREMENTS, version: "v", sourceNode: "n", now: NOW });
    const b = buildSnapshot({
      measurements: structuredClone(MEASUREMENTS),
      version: "v",
      sourceNode: "n",
      now: NOW,
    });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(MEASUREMENTS).toEqual(before);
  });

  test("a type collected twice is a bug, reported as INTERNAL", () => {
    const twice = [...MEASUREMENTS, { type: "GPU" as const, subtypes: [] }];
    const build = (): unknown =>
      buildSnapshot({ measurements: twice, version: "v", sourceNode: "n", now: NOW });
    expect(build).toThrow(AicrError);
    expect(build).toThrow('Measurement type "GPU" was collected twice');
  });

  test("timestamps are UTC with whole seconds", () => {
    expect(formatTimestamp(new Date("2026-01-02T03:04:05.999Z"))).toBe("2026-01-02T03:04:05Z");
  });
});

describe("identity from the environment", () => {
  test("source node: NODE_NAME, then KUBERNETES_NODE_NAME, then the hostname", () => {
    expect(sourceNodeFromEnv({ NODE_NAME: "a", KUBERNETES_NODE_NAME: "b" }, "h")).toBe("a");
    expect(sourceNodeFromEnv({ NODE_NAME: "", KUBERNETES_NODE_NAME: "b" }, "h")).toBe("b");
    expect(sourceNodeFromEnv({}, "h")).toBe("h");
  });

  test("provenance reads AICR_RUN_ID, AICR_POD_UID, AICR_JOB_UID; empty means unknown", () => {
    expect(provenanceFromEnv({ AICR_RUN_ID: "r", AICR_POD_UID: "", AICR_JOB_UID: "j" })).toEqual({
      runId: "r",
      podUid: undefined,
      jobUid: "j",
    });
  });
});

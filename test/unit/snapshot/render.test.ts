import { describe, expect, test } from "bun:test";
import { assertGpuFound, gpuCount, renderSnapshot } from "../../../src/snapshot/render.ts";
import { parseSnapshot, type Snapshot } from "../../../src/snapshot/schema.ts";
import { thrown } from "../../support/reject.ts";

const withGpu = (counts: (number | string)[]): Snapshot => ({
  apiVersion: "aicr.run/v1",
  kind: "Snapshot",
  metadata: { timestamp: "2026-01-31T10:30:00Z", version: "0.1.0", "source-node": "cpu-node-1" },
  measurements: [
    { type: "GPU", subtypes: counts.map((c, i) => ({ subtype: `s${i}`, data: { "gpu-count": c } })) },
  ],
});

describe("--require-gpu", () => {
  test("any GPU subtype with gpu-count > 0 passes", () => {
    expect(gpuCount(withGpu([0, 8]))).toBe(8);
    expect(() => assertGpuFound(withGpu([0, 8]))).not.toThrow();
  });

  test("none → NOT_FOUND naming the node", () => {
    for (const doc of [withGpu([0]), withGpu([]), { ...withGpu([]), measurements: [] }]) {
      const err = thrown(() => assertGpuFound(doc));
      expect(err.code).toBe("NOT_FOUND");
      expect(err.message).toContain('"cpu-node-1"');
      expect(err.message).toContain("not delivered");
    }
    expect(() => assertGpuFound(withGpu([0]), "cm://ns/x")).toThrow(/already written cm:\/\/ns\/x/);
  });
});

describe("renderSnapshot", () => {
  test("yaml and json read back; table does not", () => {
    const doc = withGpu([8]);
    expect(parseSnapshot(renderSnapshot(doc, { kind: "yaml" }), "y")).toEqual(doc);
    expect(parseSnapshot(renderSnapshot(doc, { kind: "json" }), "j")).toEqual(doc);
    expect(renderSnapshot(doc, { kind: "table" })).toContain("GPU.s0.gpu-count");
  });
});

import { describe, expect, test } from "bun:test";
import type { FleetResult } from "../../../src/diff/fleet.ts";
import { fleetDocument, fleetLine, nodeList, renderFleetText } from "../../../src/diff/fleet-report.ts";
import { rawControls } from "../../support/raw-controls.ts";

const NODES = Array.from({ length: 64 }, (_, i) => `gpu-${String(i + 1).padStart(2, "0")}`);
const RESULT: FleetResult = {
  nodes: NODES,
  drift: [
    {
      path: "OS.release.VERSION_ID",
      groups: [
        {
          value: "22.04",
          count: 61,
          nodes: NODES.filter((n) => !["gpu-17", "gpu-40", "gpu-41"].includes(n)),
        },
        { value: "24.04", count: 3, nodes: ["gpu-17", "gpu-40", "gpu-41"] },
      ],
    },
    {
      path: "OS.sysctl./proc/sys/vm/swappiness",
      groups: [
        { value: "60", count: 59, nodes: NODES.slice(5) },
        { value: "10", count: 4, nodes: NODES.slice(0, 4) },
        { value: null, count: 1, nodes: ["gpu-05"] },
      ],
    },
  ],
  summary: { readings: 2, nodes: 64, differing: 8, nodeSpecific: 5, ignored: 0 },
};

describe("the fleet report", () => {
  test("names: the first three, then +N more", () => {
    expect(nodeList(["a", "b", "c"])).toBe("a, b, c");
    expect(nodeList(["a", "b", "c", "d", "e"])).toBe("a, b, c +2 more");
  });

  test("text: one line per reading, majority first, grouped by measurement, a summary", () => {
    expect(renderFleetText(fleetDocument("out/", RESULT))).toBe(
      [
        "fleet:    out/ (64 nodes)",
        "",
        "OS",
        "  OS.release.VERSION_ID: 22.04 on 61 of 64 nodes; 24.04 on 3: gpu-17, gpu-40, gpu-41",
        "  OS.sysctl./proc/sys/vm/swappiness: 60 on 59 of 64 nodes; 10 on 4: gpu-01, gpu-02, gpu-03 +1 more; <absent> on 1: gpu-05",
        "",
        "2 readings drift across 64 nodes: 8 nodes differ from the majority (5 node-specific readings not compared)",
        "",
      ].join("\n"),
    );
  });

  test("a first group without a strict majority names its nodes; the baseline is marked", () => {
    const line = fleetLine(
      {
        path: "GPU.smi.driver",
        groups: [
          { value: "570.1", count: 2, nodes: ["a", "b"], baseline: true },
          { value: "570.2", count: 2, nodes: ["c", "d"] },
        ],
      },
      4,
    );
    expect(line).toBe("GPU.smi.driver: 570.1 (baseline) on 2 of 4 nodes: a, b; 570.2 on 2: c, d");
    const none = fleetLine(
      {
        path: "K8s.x",
        groups: [
          { value: "", count: 0, nodes: [], baseline: true },
          { value: "y", count: 1, nodes: ["a"] },
        ],
      },
      1,
    );
    expect(none).toBe('K8s.x: "" (baseline) on 0 of 1 nodes; y on 1: a');
  });

  test("no drift says so, naming the baseline when there is one", () => {
    const clean: FleetResult = {
      nodes: ["a", "b"],
      drift: [],
      summary: { readings: 0, nodes: 2, differing: 0, nodeSpecific: 0, ignored: 0 },
    };
    expect(renderFleetText(fleetDocument("f.yaml", clean))).toBe(
      "fleet:    f.yaml (2 nodes)\n\nno drift: 2 nodes agree on every compared reading\n",
    );
    expect(renderFleetText(fleetDocument("f.yaml", clean, "a"))).toBe(
      "fleet:    f.yaml (2 nodes)\nbaseline: a\n\nno drift: 2 nodes match the baseline a\n",
    );
  });

  test("values, paths, node names, the source and the baseline with terminal escapes are shown escaped", () => {
    const attack = "\x1b]0;pwned\x07\x1b[2J";
    const result: FleetResult = {
      nodes: [`gpu-1${attack}`, "gpu-2", "gpu-3"],
      drift: [
        {
          path: `OS.release.PRETTY${attack}`,
          groups: [
            { value: "24.04", count: 2, nodes: ["gpu-2", "gpu-3"] },
            { value: attack, count: 1, nodes: [`gpu-1${attack}`] },
          ],
        },
      ],
      summary: { readings: 1, nodes: 3, differing: 1, nodeSpecific: 0, ignored: 0 },
    };
    const doc = fleetDocument(`out${attack}/`, result, "gpu-2\u202e");
    for (const color of [false, true]) {
      const text = renderFleetText(doc, color);
      expect(rawControls(text, { colours: true })).toEqual([]);
      expect(text).toContain(
        'OS.release.PRETTY\\u001b]0;pwned\\u0007\\u001b[2J: 24.04 on 2 of 3 nodes; "\\u001b]0;pwned\\u0007\\u001b[2J" on 1: gpu-1\\u001b]0;pwned\\u0007\\u001b[2J',
      );
      expect(text).toContain("fleet:    out\\u001b]0;pwned\\u0007\\u001b[2J/ (3 nodes)");
      expect(text).toContain("baseline: gpu-2\\u202e\n");
      expect(text).toContain("from the baseline gpu-2\\u202e");
    }
    expect(renderFleetText(doc, true)).toContain(
      "\x1b[33mOS.release.PRETTY\\u001b]0;pwned\\u0007\\u001b[2J: 24.04",
    );
    expect(nodeList(["a\tb"])).toBe("a\\tb");
  });

  test("the document for tools carries every node name", () => {
    const doc = fleetDocument("out/", RESULT, "gpu-01");
    expect(Object.keys(doc)).toEqual(["source", "baseline", "nodes", "drift", "summary"]);
    expect(doc.drift[0]?.groups[0]?.nodes).toHaveLength(61);
    expect(Object.keys(fleetDocument("out/", RESULT))).not.toContain("baseline");
  });
});

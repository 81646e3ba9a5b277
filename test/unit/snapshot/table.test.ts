import { describe, expect, test } from "bun:test";
import { renderTable } from "../../../src/snapshot/_table.ts";
import type { Snapshot } from "../../../src/snapshot/schema.ts";
import { rawControls } from "../../support/raw-controls.ts";

const snapshot: Snapshot = {
  apiVersion: "aicr.run/v1",
  kind: "Snapshot",
  metadata: { timestamp: "2026-01-31T10:30:00Z", version: "0.1.0", "source-node": "gpu-node-1" },
  measurements: [
    { type: "GPU", subtypes: [{ subtype: "smi", data: { "gpu-count": 8, driver: "570.1" } }] },
    {
      type: "NetworkTopology",
      subtypes: [
        {
          subtype: "groups",
          context: { fabric: "ib" },
          data: {},
          items: [{ context: { group: "a" }, data: { pfs: 2 } }],
        },
      ],
    },
    { type: "OS", subtypes: [{ subtype: "grub", data: { note: "two\nlines" } }] },
  ],
};

describe("renderTable", () => {
  test("FIELD/VALUE header, metadata then one aligned row per reading path (context and items too)", () => {
    const out = renderTable(snapshot);
    const lines = out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^FIELD\s+VALUE$/);
    expect(lines.map((l) => l.split(/\s{2,}/)[0])).toEqual([
      "FIELD",
      "metadata.timestamp",
      "metadata.version",
      "metadata.source-node",
      "GPU.smi.gpu-count",
      "GPU.smi.driver",
      "NetworkTopology.groups.context.fabric",
      "NetworkTopology.groups.items[0].pfs",
      "NetworkTopology.groups.items[0].context.group",
      "OS.grub.note",
    ]);
    const valueColumn = new Set(lines.map((l) => l.search(/\s{2}\S/) + 2));
    expect(valueColumn.size).toBe(1);
    expect(out).toContain("two\\nlines");
    expect(out.endsWith("\n")).toBe(true);
  });

  test("keys and values holding terminal escapes, C1 or bidi controls are shown escaped, one row each", () => {
    const out = renderTable({
      ...snapshot,
      measurements: [
        {
          type: "OS",
          subtypes: [
            {
              subtype: "release",
              data: { "PRETTY\x1b]0;pwned\x07\x1b[2J": "\x1b]0;pwned\x07\x1b[2J", path: "C:\\x\u202e" },
            },
          ],
        },
      ],
    });
    expect(rawControls(out)).toEqual([]);
    expect(out).toContain(
      "OS.release.PRETTY\\u001b]0;pwned\\u0007\\u001b[2J  \\u001b]0;pwned\\u0007\\u001b[2J\n",
    );
    expect(out).toContain("C:\\\\x\\u202e\n");
    expect(out.trimEnd().split("\n")).toHaveLength(6);
  });
});

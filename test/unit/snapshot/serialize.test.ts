import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { collectAll } from "../../../src/collect/index.ts";
import { createLogger } from "../../../src/core/log.ts";
import { buildSnapshot } from "../../../src/snapshot/_build.ts";
import { parseSnapshot, type Snapshot } from "../../../src/snapshot/schema.ts";
import { serializeSnapshot } from "../../../src/snapshot/serialize.ts";
import { thrown } from "../../support/reject.ts";

const FIXTURES = join(import.meta.dir, "../../fixtures");
const NOW = new Date("2026-11-29T10:30:00Z");

const TRICKY: Snapshot = buildSnapshot({
  version: "0.1.0",
  sourceNode: "gpu-node-07",
  now: NOW,
  measurements: [
    {
      type: "OS",
      subtypes: [
        {
          subtype: "release",
          data: {
            VERSION_ID: "24.04",
            int_like: "12",
            hex: "0x10de",
            yes: "yes",
            no: "No",
            on: "on",
            truthy: "true",
            nul: "null",
            tilde: "~",
            empty: "",
            exp: "1e3",
            sexagesimal: "1:20",
            date: "2026-11-29",
            spaces: "  padded  ",
            multi: "file\npipe\nsocket",
            colon: "a: b",
            hash: "# not a comment",
            real: 1.5,
            count: 8,
            flag: false,
            octal: "0o17",
            binary: "0b101",
            underscore: "1_000",
            inf: ".inf",
            negInf: "-.Inf",
            nan: ".nan",
            capitalTrue: "True",
            upperNull: "NULL",
            clock: "12:30:00",
            plus: "+12",
            negZero: "-0",
            tag: "!tag x",
            alias: "*alias",
            anchor: "&anchor",
            directive: "%YAML 1.1",
            at: "@at",
            tick: "`tick",
            flowSeq: "[x, y]",
            flowMap: "{x: y}",
            dash: "- x",
            question: "? x",
            pipe: "|",
            greater: ">",
            single: "'single'",
            double: '"double"',
            unicode: "ümlaut ✓",
            tab: "tab\there",
            trailing: "trailing ",
            zero: 0,
            negative: -1,
            huge: 1e21,
            tenth: 0.1,
            big: 123456789012,
          },
        },
      ],
    },
    { type: "SystemD", subtypes: [] },
  ],
});

describe("serializeSnapshot", () => {
  test.each(["yaml", "json"] as const)("%s round-trips to the same document", (format) => {
    expect(parseSnapshot(serializeSnapshot(TRICKY, format), `x.${format}`)).toEqual(TRICKY);
  });

  test.each(["yaml", "json"] as const)(
    "%s: the native reader reads back exactly what the strict one does",
    (format) => {
      const text = serializeSnapshot(TRICKY, format);
      expect(parseSnapshot(text, "x", { native: true })).toEqual(parseSnapshot(text, "x"));
      expect(parseSnapshot(text, "x", { native: true })).toEqual(TRICKY);
    },
  );

  test("the native reader fails as the strict one does on what is not one map", () => {
    const yaml = serializeSnapshot(TRICKY, "yaml");
    for (const bad of [`${yaml}---\n${yaml}`, "a: [1, 2\n", "- just\n- a list\n", "plain scalar\n", ""]) {
      const strict = thrown(() => parseSnapshot(bad, "bad")).message;
      const native = thrown(() => parseSnapshot(bad, "bad", { native: true })).message;
      expect(native).toBe(strict);
    }
  });

  test("strings that look like numbers, booleans or null are quoted in YAML", () => {
    const yaml = serializeSnapshot(TRICKY, "yaml");
    expect(yaml).toContain('VERSION_ID: "24.04"');
    // Keys too: a YAML 1.1 reader would otherwise turn the key `on` into true.
    expect(yaml).toContain('"yes": "yes"');
    expect(yaml).toContain('"on": "on"');
    expect(yaml).toContain('hex: "0x10de"');
    expect(yaml).toContain('sexagesimal: "1:20"');
    expect(yaml).toContain('timestamp: "2026-11-29T10:30:00Z"');
    expect(yaml).toContain("count: 8\n");
    expect(yaml).toContain("flag: false\n");
  });

  test("identical subtrees are written out, never as YAML anchors", () => {
    const shared = { a: "1" };
    const doc = buildSnapshot({
      version: "v",
      sourceNode: "n",
      now: NOW,
      measurements: [
        {
          type: "OS",
          subtypes: [
            { subtype: "x", data: shared },
            { subtype: "y", data: shared },
          ],
        },
      ],
    });
    const yaml = serializeSnapshot(doc, "yaml");
    expect(yaml).not.toMatch(/[&*]a\d/);
    expect(parseSnapshot(yaml, "x")).toEqual(doc);
  });

  test("output is stable: the same document gives the same bytes", () => {
    expect(serializeSnapshot(TRICKY, "yaml")).toBe(serializeSnapshot(structuredClone(TRICKY), "yaml"));
  });

  test("a full snapshot of the H100 fixture round-trips in both formats", async () => {
    const log = createLogger({ write: () => {} });
    const measurements = await collectAll({
      hostRoot: join(FIXTURES, "hosts/h100-node"),
      env: {
        PATH: [join(FIXTURES, "bin/h100"), "/usr/bin", "/bin"].join(":"),
      },
      nodeName: "gpu-node-07",
      log,
    });
    const doc = buildSnapshot({ measurements, version: "0.1.0", sourceNode: "gpu-node-07", now: NOW });
    for (const format of ["yaml", "json"] as const) {
      expect(parseSnapshot(serializeSnapshot(doc, format), format)).toEqual(doc);
      expect(parseSnapshot(serializeSnapshot(doc, format), format, { native: true })).toEqual(doc);
    }
  });
});

import { describe, expect, test } from "bun:test";
import type { Change } from "../../../src/diff/compare.ts";
import { diffDocument, renderText, showValue } from "../../../src/diff/report.ts";
import { rawControls } from "../../support/raw-controls.ts";

const CHANGES: Change[] = [
  { path: "K8s.image.dcgm-exporter", kind: "removed", baseline: "4.1.1", target: null },
  { path: "K8s.image.gpu-operator", kind: "changed", baseline: "v25.10.1", target: "v25.10.2" },
  { path: "OS.release.PRETTY", kind: "added", baseline: null, target: "" },
];

describe("the diff report", () => {
  test("text: both sides named, grouped by measurement, +/-/~ markers, a summary line", () => {
    expect(renderText(diffDocument("a.yaml", "cm://ops/b", CHANGES))).toBe(
      [
        "baseline: a.yaml",
        "target:   cm://ops/b",
        "",
        "K8s",
        "  - K8s.image.dcgm-exporter: 4.1.1",
        "  ~ K8s.image.gpu-operator: v25.10.1 -> v25.10.2",
        "OS",
        '  + OS.release.PRETTY: ""',
        "",
        "drift: 3 change(s): 1 added, 1 removed, 1 modified",
        "",
      ].join("\n"),
    );
  });

  test("no drift says so", () => {
    expect(renderText(diffDocument("a", "b", []))).toBe("baseline: a\ntarget:   b\n\nno drift: 0 changes\n");
  });

  test("colour only when asked: the marker lines are painted, the text is the same", () => {
    const painted = renderText(diffDocument("a", "b", CHANGES), true);
    expect(painted).toContain('  \x1b[32m+ OS.release.PRETTY: ""\x1b[0m');
    expect(painted).toContain("\x1b[31m- K8s.image.dcgm-exporter: 4.1.1\x1b[0m");
    expect(
      ["\x1b[0m", "\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[33m"].reduce(
        (t, code) => t.split(code).join(""),
        painted,
      ),
    ).toBe(renderText(diffDocument("a", "b", CHANGES)));
  });

  test("the document for tools, and how values are shown", () => {
    expect(diffDocument("a", "b", CHANGES).summary).toEqual({ added: 1, removed: 1, modified: 1, total: 3 });
    expect(showValue(null)).toBe("<nil>");
    expect(showValue("")).toBe('""');
    expect(showValue(" x")).toBe('" x"');
    expect(showValue(8)).toBe("8");
    expect(showValue(false)).toBe("false");
    expect(showValue("v1.2")).toBe("v1.2");
    // A backslash or a quote is quoted too: a bare value is always literal.
    expect(showValue("C:\\x")).toBe('"C:\\\\x"');
    expect(showValue('say "hi"')).toBe('"say \\"hi\\""');
  });

  test("a value, a path and a source holding terminal escapes are shown escaped, never raw", () => {
    const attack = "\x1b]0;pwned\x07\x1b[2J";
    const doc = diffDocument(`cm://ops/a${attack}`, "b.yaml", [
      { path: `OS.release.PRETTY${attack}`, kind: "changed", baseline: "24.04", target: attack },
      { path: "K8s\u202e.x", kind: "added", baseline: null, target: "a\u009bb" },
    ]);
    for (const color of [false, true]) {
      const text = renderText(doc, color);
      // Only our own colour codes (ESC [ digits m) are left; no BEL, no C1, no bidi override.
      expect(rawControls(text, { colours: true })).toEqual([]);
      expect(text).toContain(
        'OS.release.PRETTY\\u001b]0;pwned\\u0007\\u001b[2J: 24.04 -> "\\u001b]0;pwned\\u0007\\u001b[2J"',
      );
      expect(text).toContain("baseline: cm://ops/a\\u001b]0;pwned\\u0007\\u001b[2J");
      expect(text).toContain('K8s\\u202e.x: "a\\u009bb"');
    }
    expect(renderText(doc, false)).toContain("\nK8s\\u202e\n");
    expect(renderText(doc, true)).toContain(
      '\x1b[33m~ OS.release.PRETTY\\u001b]0;pwned\\u0007\\u001b[2J: 24.04 -> "\\u001b]0;pwned\\u0007\\u001b[2J"\x1b[0m',
    );
  });
});

import { describe, expect, test } from "bun:test";
import {
  parseTemplate,
  renderTemplate,
  TEMPLATE_MAX_BYTES,
  TEMPLATE_MAX_DEPTH,
  TEMPLATE_MAX_ITERATIONS,
  TEMPLATE_MAX_OUTPUT,
  TEMPLATE_MAX_VALUE,
  TEMPLATE_MAX_WORK,
} from "../../../src/snapshot/_template.ts";
import type { Snapshot, Subtype } from "../../../src/snapshot/schema.ts";
import { thrown } from "../../support/reject.ts";

const doc: Snapshot = {
  apiVersion: "aicr.run/v1",
  kind: "Snapshot",
  metadata: { timestamp: "2026-01-31T10:30:00Z", version: "0.1.0", "source-node": "gpu-node-1" },
  measurements: [
    { type: "GPU", subtypes: [{ subtype: "smi", data: { "gpu-count": 8, driver: "570.1" } }] },
    { type: "OS", subtypes: [{ subtype: "release", data: { ID: "ubuntu", VERSION_ID: "24.04" } }] },
  ],
};

const render = (text: string) => renderTemplate(parseTemplate(text, "t.tmpl"), doc);

describe("template language", () => {
  test("fields (with '-'), $, reading, default through a pipe", () => {
    expect(render("{{ .metadata.source-node }} {{ $.metadata.version }}")).toBe("gpu-node-1 0.1.0");
    expect(render('{{ reading "GPU.smi.gpu-count" }}/{{ reading "GPU.smi.nope" | default "n/a" }}')).toBe(
      "8/n/a",
    );
    expect(render('{{ index .metadata "source-node" }}')).toBe("gpu-node-1");
  });

  test("a missing field or reading renders empty", () => {
    expect(render('[{{ .nothing.here }}][{{ reading "K8s.server.version" }}]')).toBe("[][]");
  });

  test("range over lists and maps (key order), with variables and else", () => {
    expect(render("{{ range .measurements }}{{ .type }};{{ end }}")).toBe("GPU;OS;");
    expect(
      render(
        "{{ range $m := .measurements }}{{ range .subtypes }}{{ range $k, $v := .data }}{{ $m.type }}.{{ $k }}={{ $v }} {{ end }}{{ end }}{{ end }}",
      ),
    ).toBe("GPU.driver=570.1 GPU.gpu-count=8 OS.ID=ubuntu OS.VERSION_ID=24.04 ");
    expect(render("{{ range .none }}x{{ else }}empty{{ end }}")).toBe("empty");
  });

  test("if / else if / else, eq, ne, not, and, or, len, upper, json; trim markers; comments", () => {
    expect(render('{{ if eq (reading "GPU.smi.gpu-count") 8 }}eight{{ else }}other{{ end }}')).toBe("eight");
    expect(render("{{ if not .x }}a{{ else if .y }}b{{ else }}c{{ end }}")).toBe("a");
    expect(render('{{ if and .metadata .nope }}y{{ else }}n{{ end }}{{ or .nope "z" }}')).toBe("nz");
    expect(render("{{ len .measurements }} {{ upper .metadata.source-node }} {{ ne 1 2 }}")).toBe(
      "2 GPU-NODE-1 true",
    );
    expect(render('a  {{- /* hidden */ -}}  b {{- " c" }}')).toBe("ab c");
    expect(render("{{ json .metadata.version }}")).toBe('"0.1.0"');
  });

  test("parse errors name line and column", () => {
    const cases: [string, string][] = [
      ["ok\n  {{ .a", "line 2, column 3"],
      ["{{ if .a }}x", "line 1, column 1: if has no end"],
      ["x\n{{ end }}", "line 2, column 1: end without"],
      ['{{ system "ls" }}', 'unknown function or keyword "system"'],
      ['{{ "unterminated }}', "line 1"],
      ["{{ else }}", "else without"],
    ];
    for (const [text, expected] of cases) {
      const err = thrown(() => parseTemplate(text, "t.tmpl"));
      expect(err.code).toBe("INVALID_REQUEST");
      expect(err.message).toContain('--template "t.tmpl"');
      expect(err.message).toContain(expected);
    }
  });

  test("bounded: output size and loop iterations", () => {
    const one = (data: Record<string, string>): Snapshot => ({
      ...doc,
      measurements: [{ type: "OS", subtypes: [{ subtype: "s", data }] }],
    });
    const huge = one({ k: "x".repeat(1024 * 1024) });
    const five =
      "{{ range .measurements }}{{ range .subtypes }}{{ range .data }}{{ . }}{{ . }}{{ . }}{{ . }}{{ . }}{{ end }}{{ end }}{{ end }}";
    const big = thrown(() => renderTemplate(parseTemplate(five, "t"), huge));
    expect(big.message).toContain(`more than ${TEMPLATE_MAX_OUTPUT} characters`);
    const wide = one(Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`k${i}`, "v"])));
    const square =
      "{{ range .measurements }}{{ range .subtypes }}{{ range .data }}{{ range $.measurements }}{{ range .subtypes }}{{ range .data }}{{ end }}{{ end }}{{ end }}{{ end }}{{ end }}{{ end }}";
    const loops = thrown(() => renderTemplate(parseTemplate(square, "t"), wide));
    expect(loops.message).toContain(`more than ${TEMPLATE_MAX_ITERATIONS} loop iterations`);
  });
});

describe("template limits: every value made, nesting, linear parsing (issue 25, item 3)", () => {
  /** 1-based column of the n-th (0-based) occurrence of `word` in a one-line template. */
  const columnOf = (text: string, word: string, n: number): number => {
    let at = -1;
    for (let k = 0; k <= n; k++) at = text.indexOf(word, at + 1);
    return at + 1;
  };

  test("40 chained json pipes: refused at the json whose value crosses the bound, line:column named", () => {
    const bomb = `{{ . | ${Array(40).fill("json").join(" | ")} }}`;
    // which json crosses: the snapshot's JSON, quoted again and again, until longer than the bound
    let value = JSON.stringify(doc);
    let crossing = 0;
    while (value.length <= TEMPLATE_MAX_VALUE) {
      value = JSON.stringify(value);
      crossing++;
    }
    expect(crossing).toBeLessThan(40);
    const err = thrown(() => renderTemplate(parseTemplate(bomb, "bomb.tmpl"), doc));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain(`line 1, column ${columnOf(bomb, "json", crossing)}:`);
    expect(err.message).toContain(`json makes a value longer than ${TEMPLATE_MAX_VALUE} characters`);
    expect(err.context).toMatchObject({
      field: "--template",
      line: 1,
      column: columnOf(bomb, "json", crossing),
    });
  });

  test("json chained inside parentheses and used by len (never printed) is bounded too", () => {
    const inner = `(. | ${Array(40).fill("json").join(" | ")})`;
    const err = thrown(() => render(`x\n{{ len ${inner} }}`));
    expect(err.message).toMatch(/at line 2, column \d+: json makes a value longer than/);
  });

  test("join: a long separator times a long list is refused before it is joined", () => {
    const many: Snapshot = {
      ...doc,
      measurements: [
        { type: "OS", subtypes: Array.from({ length: 1000 }, (_, i) => ({ subtype: `s${i}`, data: {} })) },
      ],
    };
    // the separator: the snapshot's JSON quoted four times (~400 KB), times 999 gaps
    const tpl = '{{ join (json $ | json | json | json) (index $.measurements 0 "subtypes") }}';
    const err = thrown(() => renderTemplate(parseTemplate(tpl, "t"), many));
    expect(err.message).toContain(`line 1, column 4: join makes a value longer than ${TEMPLATE_MAX_VALUE}`);
  });

  test("upper, lower and the text eq makes of a map are values made, bounded alike", () => {
    const chain = `$ | ${Array(40).fill("json").join(" | ")}`;
    for (const fn of ["upper", "lower"]) {
      const err = thrown(() => render(`{{ ${fn} (${chain}) }}`));
      expect(err.message).toContain("makes a value longer than");
    }
  });

  test("all the values made together are bounded: a loop re-encoding the snapshot stops at the work limit", () => {
    const big: Snapshot = {
      ...doc,
      measurements: [
        {
          type: "OS",
          subtypes: Array.from(
            { length: 100 },
            (_, i): Subtype => ({
              subtype: `s${i}`,
              data: i === 0 ? { blob: "x".repeat(1024 * 1024) } : {},
            }),
          ),
        },
      ],
    };
    // each iteration makes the snapshot's JSON (1 MiB) twice; 100 iterations would be 200 MiB
    const tpl =
      '{{ range (index $.measurements 0 "subtypes") }}{{ if eq (json $) (json $) }}{{ end }}{{ end }}';
    const err = thrown(() => renderTemplate(parseTemplate(tpl, "t"), big));
    expect(err.message).toContain(`more than ${TEMPLATE_MAX_WORK} characters (the work limit)`);
    // the m-th json made (0-based) crosses: the first of its iteration when m is even, the second when odd
    const m = Math.floor(TEMPLATE_MAX_WORK / JSON.stringify(big).length);
    expect(m).toBeLessThan(200);
    expect(err.message).toContain(`line 1, column ${columnOf(tpl, "json", m % 2)}: json:`);
  });

  test("the output limit names where it was crossed", () => {
    const half: Snapshot = {
      ...doc,
      measurements: [
        { type: "OS", subtypes: [{ subtype: "s", data: { k: "y".repeat(TEMPLATE_MAX_OUTPUT / 2 + 1) } }] },
      ],
    };
    const tpl = 'ab\n  {{ reading "OS.s.k" }}{{ reading "OS.s.k" }}';
    const err = thrown(() => renderTemplate(parseTemplate(tpl, "t"), half));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toContain(`line 2, column 25: renders more than ${TEMPLATE_MAX_OUTPUT} characters`);
  });

  test("a value given arguments it cannot take names its own position", () => {
    const err = thrown(() => render('{{ if 1 }}\n  {{ (len .measurements) "x" }}{{ end }}'));
    expect(err.message).toContain("line 2, column 6: only a function takes arguments");
  });

  test("100 000 nested parentheses: refused while parsing at the first one too deep, line:column named", () => {
    const n = 100_000;
    const text = `first line\n{{ len ${"(".repeat(n)}.${")".repeat(n)} }}`;
    const err = thrown(() => parseTemplate(text, "deep.tmpl"));
    expect(err.code).toBe("INVALID_REQUEST");
    // "{{ len " is 7 characters: the (TEMPLATE_MAX_DEPTH + 1)-th "(" is at column 8 + TEMPLATE_MAX_DEPTH
    expect(err.message).toContain(
      `line 2, column ${8 + TEMPLATE_MAX_DEPTH}: parentheses nested deeper than ${TEMPLATE_MAX_DEPTH}`,
    );
  });

  test("parentheses exactly at the nesting limit parse and render", () => {
    const d = TEMPLATE_MAX_DEPTH;
    expect(render(`{{ len ${"(".repeat(d)}.measurements${")".repeat(d)} }}`)).toBe("2");
  });

  test("blocks nested one deeper than the limit: refused with the line:column of the block too deep", () => {
    const d = TEMPLATE_MAX_DEPTH;
    const ok = `${"{{ if 1 }}".repeat(d)}in${"{{ end }}".repeat(d)}`;
    expect(render(ok)).toBe("in");
    const deep = `${"{{ range .measurements }}\n".repeat(d)}{{ if 1 }}${"{{ end }}".repeat(d + 1)}`;
    const err = thrown(() => parseTemplate(deep, "t"));
    expect(err.message).toContain(`line ${d + 1}, column 1: blocks nested deeper than ${d}`);
  });

  test("52 000 actions parse and render (positions from a line table, not a rescan)", () => {
    const n = 52_000;
    const text = "{{1}}".repeat(n);
    expect(text.length).toBeLessThanOrEqual(TEMPLATE_MAX_BYTES);
    expect(render(text)).toBe("1".repeat(n));
  });

  test("an error after 40 000 lines of actions names its line and column exactly", () => {
    const text = `${"{{1}}\n".repeat(40_000)}ab {{ nope }}`;
    const err = thrown(() => parseTemplate(text, "t"));
    expect(err.message).toContain('line 40001, column 7: unknown function or keyword "nope"');
    expect(err.context).toMatchObject({ line: 40_001, column: 7 });
  });

  test("the template text is bounded", () => {
    const err = thrown(() => parseTemplate("x".repeat(TEMPLATE_MAX_BYTES + 1), "t"));
    expect(err.message).toContain(`longer than ${TEMPLATE_MAX_BYTES} bytes`);
  });
});

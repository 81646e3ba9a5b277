import { describe, expect, test } from "bun:test";
import {
  parseTemplate,
  renderTemplate,
  TEMPLATE_MAX_ITERATIONS,
  TEMPLATE_MAX_OUTPUT,
} from "../../../src/snapshot/_template.ts";
import type { Snapshot } from "../../../src/snapshot/schema.ts";
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

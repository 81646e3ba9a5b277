import { describe, expect, test } from "bun:test";
import { yamlErrorAt } from "../../../src/core/input-file.ts";
import { parseYamlDocument } from "../../../src/core/yaml.ts";

const errorOf = (text: string): unknown => {
  try {
    parseYamlDocument(text);
  } catch (err) {
    return err;
  }
  throw new Error("expected a parse error");
};

describe("parseYamlDocument", () => {
  test("YAML and JSON read as the yaml package reads them", () => {
    expect(parseYamlDocument("a: 1\nb: [x, 'y']\nc: {d: null}\n")).toEqual({
      a: 1,
      b: ["x", "y"],
      c: { d: null },
    });
    expect(parseYamlDocument('{"a": [1, 2.5, true]}')).toEqual({ a: [1, 2.5, true] });
    expect(parseYamlDocument("")).toBeNull();
  });

  test("a duplicate key is an error at the second key, at any depth; 1 and '1' are two keys", () => {
    expect(yamlErrorAt(errorOf("a: 1\nb:\n  c: 1\n  c: 2\n"))).toBe("at line 4, column 3 (DUPLICATE_KEY)");
    expect(yamlErrorAt(errorOf('{"k": 1, "k": 2}'))).toBe("at line 1, column 10 (DUPLICATE_KEY)");
    expect(parseYamlDocument("1: a\n'1x': b\n")).toEqual({ 1: "a", "1x": "b" });
  });

  test("40,000 keys, and 40,000 in a JSON flow map, read with one set per map (linear), duplicates still found", () => {
    const block = Array.from({ length: 40_000 }, (_, i) => `k${i}: ${i}`).join("\n");
    expect(Object.keys(parseYamlDocument(block) as object)).toHaveLength(40_000);
    const flow = `{${Array.from({ length: 40_000 }, (_, i) => `"k${i}": ${i}`).join(", ")}, "k7": 0}`;
    expect(yamlErrorAt(errorOf(flow))).toMatch(/^at line 1, column \d+ \(DUPLICATE_KEY\)$/);
  });

  test("syntax errors, several documents and alias bombs are errors with a position and a code only", () => {
    const secret = 'token: "sk-unterminated\nnext: 1\n';
    const err = errorOf(secret) as Error;
    expect(err.message).not.toContain("sk-");
    expect(yamlErrorAt(err)).toMatch(/^at line \d+, column \d+ \([A-Z_]+\)$/);
    expect(yamlErrorAt(errorOf("a: 1\n---\nb: 2\n"))).toContain("(MULTIPLE_DOCS)");
    const bomb = ["a: &a [x, x, x, x, x, x, x, x, x]"];
    for (let i = 0; i < 9; i++)
      bomb.push(`${"bcdefghij"[i]}: &${"bcdefghij"[i]} [${Array(9).fill(`*${"abcdefghi"[i]}`).join(", ")}]`);
    expect(() => parseYamlDocument(bomb.join("\n"))).toThrow();
  });
});

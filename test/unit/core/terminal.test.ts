import { describe, expect, test } from "bun:test";
import { needsEscape, quoted, visible, visibleLines, withoutControls } from "../../../src/core/terminal.ts";

const ATTACK = "\x1b]0;pwned\x07\x1b[2J";

/** Every character a terminal could obey: C0, DEL, C1, the line/paragraph separators, bidi controls. */
const OBEYED = [
  ...Array.from({ length: 0x20 }, (_, i) => i),
  ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i),
  0x2028,
  0x2029,
  ...Array.from({ length: 5 }, (_, i) => 0x202a + i),
  ...Array.from({ length: 4 }, (_, i) => 0x2066 + i),
].map((c) => String.fromCharCode(c));

/** Text holding none of OBEYED and no lone surrogate. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters the output must not hold
const NOTHING_OBEYED = /^[^\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]*$/u;

/** A fixed-seed generator (mulberry32): the same strings on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Strings weighted to the interesting characters: controls, quotes, backslashes, surrogates, text. */
function strings(count: number, seed = 25): string[] {
  const next = random(seed);
  const pools = [
    OBEYED,
    ["\\", '"', "u", "0", "1", "b", "x", "n"],
    ["\ud800", "\udfff", "\ud83d\ude00", "é", "日", "\u200f", "\u00a0"],
    ["a", " ", "-", ".", "1"],
  ];
  return Array.from({ length: count }, () =>
    Array.from({ length: Math.floor(next() * 24) }, () => {
      const pool = pools[Math.floor(next() * pools.length)] ?? [];
      return pool[Math.floor(next() * pool.length)] ?? "";
    }).join(""),
  );
}

describe("visible", () => {
  test("the terminal attack of issue 25 is shown, not obeyed", () => {
    expect(visible(ATTACK)).toBe("\\u001b]0;pwned\\u0007\\u001b[2J");
  });

  test("JSON's named escapes, then \\uXXXX in lowercase hex for every other escaped character", () => {
    expect(visible("a\nb\rc\td\be\ff")).toBe("a\\nb\\rc\\td\\be\\ff");
    expect(visible("\u0000\u001f\u007f")).toBe("\\u0000\\u001f\\u007f");
    expect(visible("\u0085\u009b")).toBe("\\u0085\\u009b");
    expect(visible("\u2028\u2029")).toBe("\\u2028\\u2029");
    expect(visible("abc\u202egnp.exe")).toBe("abc\\u202egnp.exe");
    expect(visible("\u2066\u2067\u2068\u2069\u202a\u202b\u202c\u202d")).toBe(
      "\\u2066\\u2067\\u2068\\u2069\\u202a\\u202b\\u202c\\u202d",
    );
  });

  test("every character a terminal could obey is escaped, one by one", () => {
    for (const c of OBEYED) {
      expect(visible(c)).toMatch(/^\\/);
      expect(visible(c)).toMatch(NOTHING_OBEYED);
      expect(needsEscape(c)).toBe(true);
    }
  });

  test("a backslash is doubled: a value cannot pose as an escape", () => {
    expect(visible("\\u001b")).toBe("\\\\u001b");
    expect(visible("\\u001b")).not.toBe(visible("\x1b"));
    expect(visible("C:\\drivers")).toBe("C:\\\\drivers");
  });

  test("text in any script, emoji, quotes and marks are printed as they are", () => {
    for (const text of [
      "v1.33.4",
      "NVIDIA H100 80GB HBM3",
      "日本語 é ß",
      "😀 ok",
      'say "hi"',
      "a\u200fb",
      "x\u00a0y",
    ]) {
      expect(visible(text)).toBe(text);
      expect(needsEscape(text)).toBe(false);
    }
  });

  test("a lone surrogate is escaped; a pair (an emoji) is not", () => {
    expect(visible("a\ud800b\udc00")).toBe("a\\ud800b\\udc00");
    expect(visible("\ud83d\ude00")).toBe("\ud83d\ude00");
  });

  test("property: one line, nothing a terminal obeys, and quoted() reads back as JSON", () => {
    const inputs = strings(3000);
    for (const s of inputs) {
      const shown = visible(s);
      expect(shown).not.toMatch(/[\n\r\u2028\u2029]/);
      expect(shown).toMatch(NOTHING_OBEYED);
      // Every backslash starts a well-formed escape.
      expect(shown.replace(/\\(u[0-9a-f]{4}|[\\nrtbf])/g, "")).not.toContain("\\");
      expect(JSON.parse(quoted(s))).toBe(s);
      expect(needsEscape(s)).toBe(shown !== s);
    }
    // The generator does reach the characters that matter.
    expect(inputs.filter((s) => s.includes("\x1b")).length).toBeGreaterThan(10);
    expect(inputs.filter((s) => s.includes("\\")).length).toBeGreaterThan(100);
  });

  test("idempotent only where nothing is escaped: escaping twice doubles the backslashes", () => {
    expect(visible(visible("\x1b"))).toBe("\\\\u001b");
    expect(visible(visible("plain"))).toBe("plain");
  });
});

describe("visibleLines", () => {
  test("keeps line feeds, escapes everything else visible does (a carriage return too)", () => {
    expect(visibleLines(`first\nsecond ${ATTACK}\r\n`)).toBe(
      "first\nsecond \\u001b]0;pwned\\u0007\\u001b[2J\\r\n",
    );
    expect(visibleLines("a\\b\tc")).toBe("a\\\\b\\tc");
  });
});

describe("quoted", () => {
  test("double quotes around visible text, an inner quote escaped: a JSON string literal", () => {
    expect(quoted("")).toBe('""');
    expect(quoted('say "hi"')).toBe('"say \\"hi\\""');
    expect(quoted(ATTACK)).toBe('"\\u001b]0;pwned\\u0007\\u001b[2J"');
    expect(quoted("a\nb")).toBe(JSON.stringify("a\nb"));
  });
});

describe("withoutControls (the log's last line of defence)", () => {
  test("escapes what a terminal obeys; keeps backslash, line feed and tab", () => {
    expect(withoutControls("a\x1b[2J\tb\nc\\d\u009b\u202e\r")).toBe("a\\u001b[2J\tb\nc\\d\\u009b\\u202e\\r");
    expect(withoutControls("plain ünïcode 🎉")).toBe("plain ünïcode 🎉");
  });
});

/**
 * What a human-facing report must never print raw (core/terminal.ts escapes it): the C0 controls but
 * the line feed, DEL, C1, the line and paragraph separators, the bidi embeddings, overrides and
 * isolates. Our own colour codes (`ESC[<digits>m`) are taken out first when `colours` is set.
 */
const SGR = new RegExp(`${String.fromCharCode(0x1b)}\\[[0-9;]*m`, "g");

const obeyed = (code: number): boolean =>
  (code < 0x20 && code !== 0x0a) ||
  (code >= 0x7f && code <= 0x9f) ||
  code === 0x2028 ||
  code === 0x2029 ||
  (code >= 0x202a && code <= 0x202e) ||
  (code >= 0x2066 && code <= 0x2069);

/** The raw controls in `text`, as `U+XXXX` (an empty list when the report is safe to print). */
export function rawControls(text: string, options: { colours?: boolean } = {}): string[] {
  const shown = options.colours ? text.replace(SGR, "") : text;
  return [...shown]
    .filter((c) => obeyed(c.codePointAt(0) ?? 0))
    .map((c) => `U+${(c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`);
}

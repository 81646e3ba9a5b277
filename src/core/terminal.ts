/**
 * Text from data, made safe to print to a terminal (pure). A reading value, a key, a node's name or a
 * server's message may hold characters a terminal obeys rather than shows — `ESC]0;…BEL` retitles
 * the window, `ESC[2J` clears the screen, U+202E reverses what follows — and a value may come from a
 * ConfigMap others can write. Every human-facing report passes such text through `visible` (or
 * `quoted`) before it adds its own layout and colours, so aicr's own escape codes are never escaped
 * and a value's never reach the terminal. Machine output (-o json|yaml, CTRF) is left alone: its
 * serialiser has its own escaping and a tool wants the exact value.
 *
 * The notation is JSON's string escapes, so `quoted(x)` is a JSON string literal that JSON.parse
 * reads back as exactly `x`:
 *
 *   `\\`                      a backslash
 *   `\n` `\r` `\t` `\b` `\f`  line feed, carriage return, tab, backspace, form feed
 *   `\u` + 4 lowercase hex     every other escaped character: ESC is `\u001b`, BEL `\u0007`
 *
 * Escaped: the C0 controls U+0000–U+001F, DEL U+007F, the C1 controls U+0080–U+009F (a terminal may
 * obey CSI U+009B as it does `ESC[`), the line and paragraph separators U+2028–U+2029 (a table row
 * stays one line), the bidirectional embeddings and overrides U+202A–U+202E and isolates
 * U+2066–U+2069 (they reorder what is printed after them), and lone surrogates (not text).
 * Everything else, every script and emoji included, is printed as it is.
 *
 * The backslash itself is escaped, always: otherwise the six characters `\u001b` in a value and a
 * real ESC would print alike, and a value could pose as one that was escaped. Doubling it keeps the
 * mapping one-to-one (the rule of C, JSON and Go's %q); the cost, a Windows path printed with `\\`,
 * is rare in a node's readings.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters this module escapes
const ESCAPED = /[\\\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]/gu;
const ANY_ESCAPED = new RegExp(ESCAPED.source, "u");
// The same set without the line feed: text aicr lays out on several lines itself.
const ESCAPED_KEEPING_LINES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters this module escapes
  /[\\\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]/gu;

const NAMED: Readonly<Record<string, string>> = {
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\b": "\\b",
  "\f": "\\f",
};

const escapeChar = (c: string): string =>
  NAMED[c] ?? `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`;

/** `text` on one line with every character a terminal could obey written as an escape (see above). */
export const visible = (text: string): string => text.replace(ESCAPED, escapeChar);

/**
 * As `visible`, but line feeds kept: for text that is several lines by design (a message aicr wrote
 * around a value, a relayed log message). A carriage return is still escaped: it would let a line
 * overwrite the one printed before it.
 */
export const visibleLines = (text: string): string => text.replace(ESCAPED_KEEPING_LINES, escapeChar);

/** Whether `visible` would change `text`: printing it bare would hide or obey something. */
export const needsEscape = (text: string): boolean => ANY_ESCAPED.test(text);

/** `text` in double quotes, escaped as `visible` does and `"` as `\"`: a JSON string literal. */
export const quoted = (text: string): string => `"${visible(text).replace(/"/g, '\\"')}"`;

// What a log line may not carry raw: the set above without the backslash, the line feed and the tab.
const OBEYED =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters this module escapes
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]/gu;

/**
 * The log's last line of defence (core/log.ts, text mode): every character a terminal would obey is
 * escaped, and nothing else — a backslash, a line feed and a tab print as they are, so a message a
 * report already made visible is not escaped twice. Reports still use `visible`, which is one-to-one.
 */
export const withoutControls = (text: string): string => text.replace(OBEYED, escapeChar);

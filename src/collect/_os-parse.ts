import type { Readings } from "./_types.ts";

/** os-release(5): KEY=VALUE lines; comments, blank and key-only lines skipped; one layer of quotes trimmed. */
export function parseOsRelease(content: string): Readings {
  const out: Readings = {};
  for (const raw of content.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) continue;
    const key = line.slice(0, eq).trim();
    let value = line.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) {
      value = value.slice(1, -1);
    }
    out[key] = value;
  }
  return out;
}

/** Splits a kernel command line on whitespace, keeping double-quoted runs (`a="b c"`) together. */
function tokenizeCmdline(content: string): string[] {
  const tokens: string[] = [];
  let current = "";
  let quoted = false;
  let started = false;
  for (const ch of content) {
    if (ch === '"') {
      quoted = !quoted;
      started = true;
    } else if (!quoted && /\s/.test(ch)) {
      if (started) tokens.push(current);
      current = "";
      started = false;
    } else {
      current += ch;
      started = true;
    }
  }
  if (started) tokens.push(current);
  return tokens;
}

/**
 * /proc/cmdline: `k=v` → k: v, a bare flag → "", `root` dropped (it names a disk, not a setting).
 * Everything after a bare `--` belongs to init, not the kernel, so it is not recorded. A repeated
 * key keeps its last value, as the kernel's own parsing does for most parameters.
 */
export function parseKernelCmdline(content: string): Readings {
  const out: Readings = {};
  for (const token of tokenizeCmdline(content)) {
    if (token === "--") break;
    const eq = token.indexOf("=");
    const key = eq < 0 ? token : token.slice(0, eq);
    if (key === "" || key === "root") continue;
    out[key] = eq < 0 ? "" : token.slice(eq + 1);
  }
  return out;
}

/** /proc/modules: the first field of each line is a loaded module. */
export function parseModules(content: string): Readings {
  const out: Readings = {};
  for (const line of content.split("\n")) {
    const name = line.trim().split(/\s+/)[0];
    if (name) out[name] = true;
  }
  return out;
}

/**
 * One /proc/sys file's readings. Single-line content is stored trimmed under the path. A multi-line
 * file whose every non-empty line is `key value…` becomes `<path>/<key>` entries. Any other multi-line
 * file (a list such as kernel/core_modes) is kept whole under the path, its lines trimmed and joined
 * with "\n", as the reference does.
 */
export function sysctlReadings(path: string, content: string): Readings {
  const lines = content
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  if (lines.length <= 1) return { [path]: lines[0] ?? "" };
  const expanded: Readings = {};
  for (const line of lines) {
    const fields = line.split(/\s+/);
    if (fields.length < 2) return { [path]: lines.join("\n") };
    expanded[`${path}/${fields[0]}`] = fields.slice(1).join(" ");
  }
  return expanded;
}

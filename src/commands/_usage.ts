import { type ErrorCode, EXIT_CODES, UNSTRUCTURED_EXIT } from "../core/errors.ts";
import { aliasesOf, type FlagSpec, type FlagSpecs, takesValue, valueHintOf } from "./_flag-spec.ts";

/**
 * aicr's help page, rendered from a command's definition (pure): wrapped to the given width with no
 * trailing spaces, each flag once with its aliases, value hint and description, the default said
 * once, the environment variable it falls back to, a boolean's `--no-x` line when it has a negative
 * description (or defaults to true), hidden flags left out, then the examples and, on the root page,
 * the exit codes.
 */

export interface UsageCommand {
  /** The full command path as typed: `aicr`, `aicr snapshot`, `aicr image push`. */
  path: string;
  description: string;
  args?: FlagSpecs;
  /** Flags shared by every command: listed under their own heading. */
  globalArgs?: FlagSpecs;
  /** A group's (or the root's) subcommands, in order. */
  subcommands?: { name: string; description: string }[];
  examples?: readonly string[];
  /** The root page ends with the exit-code table. */
  exitCodes?: boolean;
  /** A closing line, e.g. how to get a subcommand's help. */
  footer?: string;
}

type Status = (typeof EXIT_CODES)[ErrorCode];

/** What each exit status means (README "Exit codes"); typed so a new status cannot go undescribed. */
const EXIT_MEANINGS: Record<Status, string> = {
  2: "bad input, or something already exists; nothing was changed",
  3: "a required object or reading is missing",
  4: "missing permissions (all of them are listed at once)",
  5: "a wait ran out",
  6: "the API server or registry cannot be reached, is not trusted, or does not answer",
  7: "the API server kept answering 429",
  8: "a step failed inside the cluster",
  9: "cancelled by SIGINT/SIGTERM (a second signal exits at once)",
};

/** The exit-code table rows: the status, then its codes and what it means. */
export function exitCodeRows(): [string, string][] {
  const rows: [string, string][] = [
    ["0", "success"],
    [String(UNSTRUCTURED_EXIT), "unstructured error (a bug: please report it)"],
  ];
  const byStatus = new Map<Status, ErrorCode[]>();
  for (const [code, status] of Object.entries(EXIT_CODES) as [ErrorCode, Status][])
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  for (const [status, codes] of [...byStatus].sort((x, y) => x[0] - y[0]))
    rows.push([String(status), `${codes.join(", ")}: ${EXIT_MEANINGS[status]}`]);
  return rows;
}

/** The terminal width: stdout's columns, else $COLUMNS, else 80 (and never below 40). */
export function usageWidth(
  columns: number | undefined,
  env: Readonly<Record<string, string | undefined>>,
): number {
  const fromEnv = Number.parseInt(env.COLUMNS ?? "", 10);
  const width = columns && columns > 0 ? columns : Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : 80;
  return Math.max(40, width);
}

/** Words filled into lines of at most `width` characters (a longer word stands alone). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.length ? lines : [""];
}

/** Says the environment variable and the default, each only when the description does not already. */
function describe(def: FlagSpec): string {
  const env = def.type !== "positional" ? def.env : undefined;
  const base = def.description ?? "";
  const text = env && !base.includes(`$${env}`) ? `${base} (also $${env})`.trim() : base;
  if (def.default === undefined || def.default === false || /\bdefault\b/i.test(text)) return text;
  const value = def.default === true ? "default" : `default: ${String(def.default)}`;
  return text ? `${text} (${value})` : `(${value})`;
}

/** The rows of one flag: `-o, --output <dest>` and its text, then `--no-x` when it has one. */
function flagRows(name: string, def: FlagSpec): [string, string][] {
  const short = aliasesOf(def).filter((a) => a.length === 1);
  const long = aliasesOf(def).filter((a) => a.length > 1);
  const hint = takesValue(def) ? ` <${valueHintOf(name, def)}>` : "";
  const head = short.length ? `${short.map((a) => `-${a}`).join(", ")}, ` : "    ";
  const spelled = [name, ...long].map((n) => `--${n}`).join(", ");
  const rows: [string, string][] = [[`${head}${spelled}${hint}`, describe(def)]];
  if (def.type === "boolean" && !name.startsWith("no-") && (def.negativeDescription || def.default === true))
    rows.push([`    --no-${name}`, def.negativeDescription ?? ""]);
  return rows;
}

const isListed = (def: FlagSpec): boolean => !def.hidden;

/** Two columns when they fit, else the text under its label; every line within `width`. */
function table(rows: [string, string][], width: number, indent = 2): string[] {
  const labelWidth = Math.max(0, ...rows.map(([l]) => l.length));
  const column = Math.min(labelWidth, Math.floor(width * 0.4));
  const textAt = indent + column + 2;
  const out: string[] = [];
  for (const [label, text] of rows) {
    const pad = " ".repeat(indent);
    const room = width - textAt;
    if (label.length <= column && room >= 20) {
      const lines = wrap(text, room);
      out.push(`${pad}${label.padEnd(column)}  ${lines[0]}`.trimEnd());
      for (const l of lines.slice(1)) out.push(`${" ".repeat(textAt)}${l}`.trimEnd());
    } else {
      out.push(`${pad}${label}`.trimEnd());
      const under = indent + 6;
      for (const l of wrap(text, width - under)) if (l) out.push(`${" ".repeat(under)}${l}`);
    }
  }
  return out;
}

export function renderUsage(cmd: UsageCommand, width: number): string {
  const own = Object.entries(cmd.args ?? {}).filter(([name]) => !(name in (cmd.globalArgs ?? {})));
  const positionals = own.filter(([, d]) => d.type === "positional" && isListed(d));
  const flags = own.filter(([, d]) => d.type !== "positional" && isListed(d));
  const globals = Object.entries(cmd.globalArgs ?? {}).filter(([, d]) => isListed(d));
  const out: string[] = [...wrap(cmd.description, width), ""];

  const words = [cmd.path];
  if (cmd.subcommands?.length) words.push("<command>");
  for (const [name, d] of positionals)
    words.push(
      d.type === "positional" && d.required === false ? `[${name.toUpperCase()}]` : `<${name.toUpperCase()}>`,
    );
  if (flags.length || globals.length) words.push("[flags]");
  out.push("Usage:", ...wrap(words.join(" "), width - 2).map((l) => `  ${l}`), "");

  if (cmd.subcommands?.length) {
    out.push(
      "Commands:",
      ...table(
        cmd.subcommands.map((s) => [s.name, s.description]),
        width,
      ),
      "",
    );
  }
  if (positionals.length) {
    const rows = positionals.map(([n, d]): [string, string] => [n.toUpperCase(), describe(d)]);
    out.push("Arguments:", ...table(rows, width), "");
  }
  if (flags.length) {
    const rows = flags.flatMap(([n, d]) => flagRows(n, d));
    out.push("Flags:", ...table(rows, width), "");
  }
  if (globals.length) {
    const rows = globals.flatMap(([n, d]) => flagRows(n, d));
    out.push(flags.length || cmd.subcommands ? "Global flags:" : "Flags:", ...table(rows, width), "");
  }
  if (cmd.examples?.length) {
    out.push("Examples:");
    for (const example of cmd.examples) {
      const lines = wrap(example, width - 6);
      out.push(`  ${lines[0]}`, ...lines.slice(1).map((l) => `      ${l}`));
    }
    out.push("");
  }
  if (cmd.exitCodes) out.push("Exit codes:", ...table(exitCodeRows(), width), "");
  if (cmd.footer) out.push(...wrap(cmd.footer, width), "");
  while (out.at(-1) === "") out.pop();
  return `${out.map((l) => l.trimEnd()).join("\n")}\n`;
}

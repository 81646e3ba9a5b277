import { type ConsolaReporter, createConsola, type LogObject } from "consola/basic";
import { withoutControls } from "./terminal.ts";

/**
 * Logging: everything goes to stderr (stdout is data). A message is the first argument; an optional
 * plain object second argument holds structured fields, rendered `key=value` in text mode and merged
 * into the object in JSON mode.
 */
export interface Logger {
  error(message: unknown, fields?: Record<string, unknown>): void;
  warn(message: unknown, fields?: Record<string, unknown>): void;
  info(message: unknown, fields?: Record<string, unknown>): void;
  debug(message: unknown, fields?: Record<string, unknown>): void;
}

export interface LoggerOptions {
  json?: boolean;
  debug?: boolean;
  /** Defaults to: stderr is a TTY and NO_COLOR is unset. */
  color?: boolean;
  /** Defaults to process.stderr; tests pass their own sink. */
  write?: (line: string) => void;
  /** Prefix every text line (the agent sets it so its lines stand out in the remote side's stream). */
  tag?: string;
  /**
   * The context of every line (the run context passes `runId`): a field of each JSON line; never
   * rendered in text mode, where a line's own field equal to it is dropped as well.
   */
  fields?: Record<string, unknown> | undefined;
}

const LEVEL_NAMES: Record<number, string> = {
  0: "error",
  1: "warn",
  2: "info",
  3: "info",
  4: "debug",
  5: "trace",
};
const SECRET_KEY = /token|password|secret|client-key|authorization|bearer/i;

function splitArgs(args: unknown[]): { message: string; fields: Record<string, unknown> } {
  const [first, ...rest] = args;
  const fields: Record<string, unknown> = {};
  for (const extra of rest) {
    if (extra && typeof extra === "object" && !Array.isArray(extra)) Object.assign(fields, extra);
  }
  for (const key of Object.keys(fields)) if (SECRET_KEY.test(key)) fields[key] = "[redacted]";
  const message = first instanceof Error ? first.message : String(first ?? "");
  return { message, fields };
}

function renderValue(value: unknown): string {
  const text = (typeof value === "string" ? value : JSON.stringify(value)) ?? "undefined";
  // JSON.stringify escapes C0 but leaves C1 and bidi controls: withoutControls takes those
  return withoutControls(/[\s"=]/.test(text) ? JSON.stringify(text) : text);
}

function textReporter(
  opts: Required<Pick<LoggerOptions, "color" | "write">> & LoggerOptions,
): ConsolaReporter {
  const paint = (code: number, s: string): string => (opts.color ? `\x1b[${code}m${s}\x1b[0m` : s);
  return {
    log(obj: LogObject) {
      const { message: raw, fields } = splitArgs(obj.args);
      // a value quoted in a message (a server's, a file's) never reaches the terminal as a command
      const message = withoutControls(raw);
      const level = LEVEL_NAMES[obj.level] ?? "info";
      const prefix =
        level === "error"
          ? paint(31, "ERROR ")
          : level === "warn"
            ? paint(33, "WARN ")
            : level === "debug" || level === "trace"
              ? paint(90, "DEBUG ")
              : "";
      const tail = Object.entries(fields)
        .filter(([k, v]) => !(opts.fields && k in opts.fields && opts.fields[k] === v))
        .map(([k, v]) => ` ${paint(90, `${k}=`)}${renderValue(v)}`)
        .join("");
      const tag = opts.tag ? `${opts.tag} ` : "";
      opts.write(`${tag}${prefix}${message}${tail}\n`);
    },
  };
}

function jsonReporter(write: (line: string) => void, context: Record<string, unknown>): ConsolaReporter {
  return {
    log(obj: LogObject) {
      const { message, fields } = splitArgs(obj.args);
      const level = LEVEL_NAMES[obj.level] ?? "info";
      const line = { time: obj.date.toISOString(), level, msg: message, ...context, ...fields };
      write(`${JSON.stringify(line)}\n`);
    },
  };
}

/** Each logger's options, so a child can be made with the same sink, mode and level. */
const OPTIONS = new WeakMap<Logger, LoggerOptions>();

/**
 * A logger writing where `parent` writes, in its mode and level, with more context: `fields` on
 * every JSON line (and, as the parent's, never repeated in text), `tag` before every text line
 * (after the parent's own tag). A logger this module did not make is wrapped: its lines get the
 * fields, not the tag.
 */
export function childLogger(
  parent: Logger,
  extra: { fields?: Record<string, unknown>; tag?: string },
): Logger {
  const options = OPTIONS.get(parent);
  if (!options) {
    const fields = extra.fields ?? {};
    return {
      error: (m, f) => parent.error(m, { ...fields, ...f }),
      warn: (m, f) => parent.warn(m, { ...fields, ...f }),
      info: (m, f) => parent.info(m, { ...fields, ...f }),
      debug: (m, f) => parent.debug(m, { ...fields, ...f }),
    };
  }
  const tag = [options.tag, extra.tag].filter(Boolean).join(" ") || undefined;
  return createLogger({ ...options, tag, fields: { ...options.fields, ...extra.fields } });
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const color =
    options.color ?? (Boolean(process.stderr.isTTY) && !process.env.NO_COLOR && process.env.TERM !== "dumb");
  const reporter = options.json
    ? jsonReporter(write, options.fields ?? {})
    : textReporter({ ...options, color, write });
  const logger: Logger = createConsola({ level: options.debug ? 4 : 3, reporters: [reporter] });
  OPTIONS.set(logger, { ...options, write, color });
  return logger;
}

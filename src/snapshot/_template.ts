import { AicrError } from "../core/errors.ts";
import { lookupReading } from "./readings.ts";
import type { Snapshot } from "./schema.ts";

/**
 * `--template`: a small subset of Go's text/template over the snapshot (pure; no I/O, no code).
 *
 *   {{ .metadata.timestamp }}            a field of the dot (keys may contain '-': .metadata.source-node)
 *   {{ reading "GPU.smi.gpu-count" }}    one reading by its path (readings.ts); empty when absent
 *   {{ range .measurements }}…{{ else }}…{{ end }}   lists in order, maps in key order; the dot is each element
 *   {{ range $k, $v := .data }}…{{ end }}            the key (or index) and the value as variables
 *   {{ if COND }}…{{ else if COND }}…{{ else }}…{{ end }}
 *   {{ X | default "n/a" }}              a pipe hands its value to the next function as the last argument
 *   functions: reading, default, eq, ne, not, and, or, len, index, lower, upper, join, json
 *   $ is the whole snapshot; {{- and -}} trim the whitespace next to them; {{/* … *\/}} is a comment.
 *
 * A missing field or reading renders empty (test with `if` or `default`). Errors name line:column.
 *
 * Bounds, each refused with INVALID_REQUEST (exit 2) naming the line:column where it was crossed:
 * 256 KiB of template text (so at most ~52 000 actions); blocks (if/range) nested at most 64 deep and
 * parentheses at most 64 deep within an action, refused while parsing; 4 Mi characters of output; 4 Mi
 * characters for any one value a function makes (json, join, lower, upper, and the text eq/ne/index
 * make of a map or list), checked as it is made (join before it joins, json before it quotes a string
 * already too long); 64 Mi characters for all such values together; 100 000 loop iterations.
 * Parsing is linear: positions come from a table of line starts (binary search), never a rescan, and
 * neither the parser nor the renderer recurses deeper than the nesting bound.
 */

export const TEMPLATE_MAX_BYTES = 256 * 1024;
export const TEMPLATE_MAX_OUTPUT = 4 * 1024 * 1024;
export const TEMPLATE_MAX_ITERATIONS = 100_000;
/** Blocks (if/range) nested in blocks, and parentheses nested within one action: each at most this deep. */
export const TEMPLATE_MAX_DEPTH = 64;
/** Characters of any one value a function makes (the output bound: a bigger value could not be printed). */
export const TEMPLATE_MAX_VALUE = TEMPLATE_MAX_OUTPUT;
/** Characters of all the values functions make in one render, together (bounds the work, not only memory). */
export const TEMPLATE_MAX_WORK = 16 * TEMPLATE_MAX_OUTPUT;

interface Pos {
  line: number;
  col: number;
}

type Arg =
  | { kind: "field"; path: string[]; pos: Pos }
  | { kind: "var"; name: string; path: string[]; pos: Pos }
  | { kind: "string"; value: string }
  | { kind: "number"; value: number }
  | { kind: "bool"; value: boolean }
  | { kind: "nil" }
  | { kind: "func"; name: string; pos: Pos }
  | { kind: "pipe"; pipe: Pipe };

type Command = Arg[];
interface Pipe {
  commands: Command[];
  pos: Pos;
}

type Node =
  | { kind: "text"; text: string; pos: Pos }
  | { kind: "action"; pipe: Pipe }
  | { kind: "if"; branches: { cond: Pipe; body: Node[] }[]; otherwise: Node[] }
  | { kind: "range"; vars: string[]; pipe: Pipe; body: Node[]; otherwise: Node[] };

export interface Template {
  source: string;
  nodes: Node[];
}

const FUNCS = [
  "reading",
  "default",
  "eq",
  "ne",
  "not",
  "and",
  "or",
  "len",
  "index",
  "lower",
  "upper",
  "join",
  "json",
];

function fail(source: string, pos: Pos, detail: string): AicrError {
  return new AicrError(
    "INVALID_REQUEST",
    `invalid --template ${JSON.stringify(source)} at line ${pos.line}, column ${pos.col}: ${detail}`,
    {
      remedy: "fix the template (see `aicr snapshot --help` and the README's template reference)",
      context: { field: "--template", value: source, line: pos.line, column: pos.col },
    },
  );
}

/** A bound crossed while rendering: where (line:column) and which bound. */
function overLimit(source: string, pos: Pos, detail: string): AicrError {
  return new AicrError(
    "INVALID_REQUEST",
    `--template ${JSON.stringify(source)} at line ${pos.line}, column ${pos.col}: ${detail}`,
    {
      remedy: "render less (narrow its range loops, chain fewer json/join)",
      context: { field: "--template", value: source, line: pos.line, column: pos.col },
    },
  );
}

/** Offsets to line:column in O(log lines): the start of every line, found once. */
class Lines {
  private readonly starts: number[] = [0];
  constructor(text: string) {
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) this.starts.push(i + 1);
  }
  at(offset: number): Pos {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: offset - (this.starts[lo] as number) + 1 };
  }
}

interface RawAction {
  body: string;
  offset: number; // where body starts in the source
  start: number; // where "{{" is
}

type Piece = { kind: "text"; text: string; offset: number } | { kind: "action"; action: RawAction };

const isSpace = (c: string | undefined) => c !== undefined && c.trim() === "";

/** Splits text and {{ actions }}, applying the trim markers; one pass over the text. */
function split(text: string, source: string, lines: Lines): Piece[] {
  const pieces: Piece[] = [];
  let at = 0;
  let trimNext = false;
  while (at <= text.length) {
    const open = text.indexOf("{{", at);
    let chunk = open < 0 ? text.slice(at) : text.slice(at, open);
    let offset = at;
    if (trimNext) {
      const trimmed = chunk.trimStart(); // the same characters as /^\s+/
      offset += chunk.length - trimmed.length;
      chunk = trimmed;
    }
    if (open < 0) {
      if (chunk) pieces.push({ kind: "text", text: chunk, offset });
      break;
    }
    let bodyStart = open + 2;
    if (
      text.startsWith("- ", bodyStart) ||
      text.startsWith("-\t", bodyStart) ||
      text.startsWith("-\n", bodyStart)
    ) {
      chunk = chunk.trimEnd();
      bodyStart += 1;
    }
    if (chunk) pieces.push({ kind: "text", text: chunk, offset });
    let close = -1;
    let inString = false;
    for (let i = bodyStart; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === "\\") i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === "}" && text[i + 1] === "}") {
        close = i;
        break;
      }
    }
    if (close < 0) throw fail(source, lines.at(open), 'unclosed action: no "}}"');
    let bodyEnd = close;
    trimNext = false;
    if (close - 2 >= bodyStart && text[close - 1] === "-" && isSpace(text[close - 2])) {
      bodyEnd = close - 1;
      trimNext = true;
    }
    pieces.push({
      kind: "action",
      action: { body: text.slice(bodyStart, bodyEnd), offset: bodyStart, start: open },
    });
    at = close + 2;
  }
  return pieces;
}

type Token =
  | { t: "word" | "field" | "var" | "string" | "number"; v: string; pos: Pos }
  | { t: "|" | "(" | ")" | ":=" | ","; pos: Pos };

const NUMBER = /-?\d+(\.\d+)?/y;

function tokenize(action: RawAction, source: string, lines: Lines): Token[] {
  const s = action.body;
  const out: Token[] = [];
  let i = 0;
  const pos = (k: number) => lines.at(action.offset + k);
  const NAME = /[A-Za-z0-9_-]/;
  while (i < s.length) {
    const c = s[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const p = pos(i);
    if (c === "|" || c === "(" || c === ")" || c === ",") {
      out.push({ t: c, pos: p });
      i++;
    } else if (c === ":" && s[i + 1] === "=") {
      out.push({ t: ":=", pos: p });
      i += 2;
    } else if (c === '"') {
      let j = i + 1;
      while (j < s.length && s[j] !== '"') j += s[j] === "\\" ? 2 : 1;
      if (j >= s.length) throw fail(source, p, "unterminated string");
      try {
        out.push({ t: "string", v: JSON.parse(s.slice(i, j + 1)) as string, pos: p });
      } catch {
        throw fail(source, p, "bad escape in string");
      }
      i = j + 1;
    } else if (c === "." || c === "$") {
      let j = i + 1;
      while (j < s.length && (NAME.test(s[j] as string) || s[j] === ".")) j++;
      out.push({ t: c === "." ? "field" : "var", v: s.slice(i, j), pos: p });
      i = j;
    } else if (/[-0-9]/.test(c)) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(s);
      if (!m) throw fail(source, p, `unexpected ${JSON.stringify(c)}`);
      out.push({ t: "number", v: m[0], pos: p });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < s.length && /[A-Za-z0-9_]/.test(s[j] as string)) j++;
      out.push({ t: "word", v: s.slice(i, j), pos: p });
      i = j;
    } else throw fail(source, p, `unexpected ${JSON.stringify(c)}`);
  }
  return out;
}

function pathOf(ref: string, source: string, p: Pos): string[] {
  if (ref === ".") return [];
  const parts = ref.slice(1).split(".");
  if (parts.some((x) => x === "")) throw fail(source, p, `bad field ${JSON.stringify(ref)}`);
  return parts;
}

/** Parses the tokens of a pipeline (commands separated by '|'); `depth` counts the enclosing parentheses. */
function parsePipe(tokens: Token[], at: { i: number }, source: string, pos: Pos, depth: number): Pipe {
  const inParens = depth > 0;
  const commands: Command[] = [];
  let cmd: Arg[] = [];
  while (at.i < tokens.length) {
    const tok = tokens[at.i] as Token;
    if (tok.t === ")") {
      if (!inParens) throw fail(source, tok.pos, 'unexpected ")"');
      break;
    }
    at.i++;
    if (tok.t === "|") {
      if (cmd.length === 0) throw fail(source, tok.pos, 'empty command before "|"');
      commands.push(cmd);
      cmd = [];
      continue;
    }
    if (tok.t === "(") {
      if (depth >= TEMPLATE_MAX_DEPTH)
        throw fail(source, tok.pos, `parentheses nested deeper than ${TEMPLATE_MAX_DEPTH}`);
      const inner = parsePipe(tokens, at, source, tok.pos, depth + 1);
      if (tokens[at.i]?.t !== ")") throw fail(source, tok.pos, 'unclosed "("');
      at.i++;
      cmd.push({ kind: "pipe", pipe: inner });
      continue;
    }
    if (tok.t === ":=" || tok.t === ",") throw fail(source, tok.pos, `unexpected "${tok.t}"`);
    const word = "v" in tok ? tok.v : "";
    if (tok.t === "string") cmd.push({ kind: "string", value: tok.v });
    else if (tok.t === "number") cmd.push({ kind: "number", value: Number(tok.v) });
    else if (tok.t === "field")
      cmd.push({ kind: "field", path: pathOf(tok.v, source, tok.pos), pos: tok.pos });
    else if (tok.t === "var") {
      const [name = "", ...rest] = tok.v.split(".");
      if (rest.some((x) => x === "")) throw fail(source, tok.pos, `bad variable ${JSON.stringify(tok.v)}`);
      cmd.push({ kind: "var", name, path: rest, pos: tok.pos });
    } else if (word === "true" || word === "false") cmd.push({ kind: "bool", value: word === "true" });
    else if (word === "nil") cmd.push({ kind: "nil" });
    else if (FUNCS.includes(word)) {
      if (cmd.length > 0)
        throw fail(source, tok.pos, `function ${word} must start a command (use parentheses)`);
      cmd.push({ kind: "func", name: word, pos: tok.pos });
    } else
      throw fail(
        source,
        tok.pos,
        `unknown function or keyword ${JSON.stringify(word)} (known: ${FUNCS.join(", ")})`,
      );
  }
  if (cmd.length === 0) throw fail(source, pos, commands.length ? 'nothing after "|"' : "empty pipeline");
  commands.push(cmd);
  return { commands, pos };
}

interface Frame {
  kind: "if" | "range";
  pos: Pos;
  node: Extract<Node, { kind: "if" | "range" }>;
  /** where new nodes go now */
  target: Node[];
}

/** Parses the template text; every error names its line and column. */
export function parseTemplate(text: string, source: string): Template {
  if (Buffer.byteLength(text) > TEMPLATE_MAX_BYTES)
    throw fail(source, { line: 1, col: 1 }, `longer than ${TEMPLATE_MAX_BYTES} bytes`);
  const lines = new Lines(text);
  const root: Node[] = [];
  const stack: Frame[] = [];
  const here = () => stack.at(-1)?.target ?? root;
  for (const piece of split(text, source, lines)) {
    if (piece.kind === "text") {
      here().push({ kind: "text", text: piece.text, pos: lines.at(piece.offset) });
      continue;
    }
    const action = piece.action;
    const pos = lines.at(action.start);
    const bare = action.body.trim();
    if (bare.length >= 4 && bare.startsWith("/*") && bare.endsWith("*/")) continue; // comment
    const tokens = tokenize(action, source, lines);
    const first = tokens[0];
    if (!first) throw fail(source, pos, "empty action");
    const keyword = first.t === "word" ? first.v : "";
    const rest = { i: 1 };
    if (keyword === "end") {
      if (tokens.length > 1) throw fail(source, pos, "nothing may follow end");
      if (!stack.pop()) throw fail(source, pos, "end without if or range");
    } else if (keyword === "else") {
      const frame = stack.at(-1);
      if (!frame) throw fail(source, pos, "else without if or range");
      const node = frame.node;
      if (tokens[1]?.t === "word" && (tokens[1] as { v: string }).v === "if") {
        if (node.kind !== "if") throw fail(source, pos, "else if inside range");
        if (frame.target === node.otherwise) throw fail(source, pos, "else if after else");
        const cond = parsePipe(tokens, { i: 2 }, source, pos, 0);
        const body: Node[] = [];
        node.branches.push({ cond, body });
        frame.target = body;
      } else {
        if (tokens.length > 1) throw fail(source, pos, "else takes nothing (or: else if COND)");
        if (frame.target === node.otherwise) throw fail(source, pos, "a second else");
        frame.target = node.otherwise;
      }
    } else if (keyword === "if") {
      if (stack.length >= TEMPLATE_MAX_DEPTH)
        throw fail(source, pos, `blocks nested deeper than ${TEMPLATE_MAX_DEPTH}`);
      const body: Node[] = [];
      const node: Node = {
        kind: "if",
        branches: [{ cond: parsePipe(tokens, rest, source, pos, 0), body }],
        otherwise: [],
      };
      here().push(node);
      stack.push({ kind: "if", pos, node, target: body });
    } else if (keyword === "range") {
      if (stack.length >= TEMPLATE_MAX_DEPTH)
        throw fail(source, pos, `blocks nested deeper than ${TEMPLATE_MAX_DEPTH}`);
      const vars: string[] = [];
      const decl = tokens.findIndex((t) => t.t === ":=");
      if (decl >= 0) {
        const names = tokens.slice(1, decl);
        for (const [k, t] of names.entries()) {
          const wantVar = k % 2 === 0;
          if (wantVar && t.t === "var" && /^\$[A-Za-z_]\w*$/.test(t.v)) vars.push(t.v.slice(1));
          else if (!wantVar && t.t === ",") continue;
          else throw fail(source, t.pos, "range declares $value or $key, $value");
        }
        if (vars.length === 0 || vars.length > 2 || names.length % 2 === 0)
          throw fail(source, pos, "range declares $value or $key, $value");
        rest.i = decl + 1;
      }
      const body: Node[] = [];
      const node: Node = {
        kind: "range",
        vars,
        pipe: parsePipe(tokens, rest, source, pos, 0),
        body,
        otherwise: [],
      };
      here().push(node);
      stack.push({ kind: "range", pos, node, target: body });
    } else {
      here().push({ kind: "action", pipe: parsePipe(tokens, { i: 0 }, source, pos, 0) });
    }
  }
  const open = stack.at(-1);
  if (open) throw fail(source, open.pos, `${open.kind} has no end`);
  return { source, nodes: root };
}

type Scope = { dot: unknown; vars: Map<string, unknown> };

const isMap = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);

function truthy(x: unknown): boolean {
  if (x === undefined || x === null || x === false || x === 0 || x === "") return false;
  if (Array.isArray(x)) return x.length > 0;
  if (isMap(x)) return Object.keys(x).length > 0;
  return true;
}

function walk(value: unknown, path: string[]): unknown {
  let v = value;
  for (const key of path) {
    if (Array.isArray(v) && /^\d+$/.test(key)) v = v[Number(key)];
    else if (isMap(v) && Object.hasOwn(v, key)) v = v[key];
    else return undefined;
  }
  return v;
}

function show(x: unknown): string {
  if (x === undefined || x === null) return "";
  if (typeof x === "string") return x;
  if (typeof x === "number" || typeof x === "boolean") return String(x);
  return JSON.stringify(x);
}

class Renderer {
  out: string[] = [];
  size = 0;
  /** characters of the values functions made so far */
  work = 0;
  iterations = 0;
  constructor(
    readonly tpl: Template,
    readonly doc: Snapshot,
  ) {}

  error(pos: Pos, detail: string): AicrError {
    return fail(this.tpl.source, pos, detail);
  }

  limit(pos: Pos, detail: string): AicrError {
    return overLimit(this.tpl.source, pos, detail);
  }

  write(s: string, pos: Pos): void {
    this.size += s.length;
    if (this.size > TEMPLATE_MAX_OUTPUT)
      throw this.limit(pos, `renders more than ${TEMPLATE_MAX_OUTPUT} characters (the output limit)`);
    this.out.push(s);
  }

  /** A value function `name` made: refused past the per-value bound, and counted toward the render's. */
  made(pos: Pos, name: string, value: string): string {
    this.tooLong(pos, name, value.length);
    this.work += value.length;
    if (this.work > TEMPLATE_MAX_WORK)
      throw this.limit(
        pos,
        `${name}: the values functions make add up to more than ${TEMPLATE_MAX_WORK} characters (the work limit)`,
      );
    return value;
  }

  /** Refuses a value of `length` characters before it is made, when that is known in advance. */
  tooLong(pos: Pos, name: string, length: number): void {
    if (length > TEMPLATE_MAX_VALUE)
      throw this.limit(
        pos,
        `${name} makes a value longer than ${TEMPLATE_MAX_VALUE} characters (the limit of any one value)`,
      );
  }

  /** `show`, with the text of a map or list (JSON) bounded and counted as a value made. */
  text(x: unknown, pos: Pos, name: string): string {
    return typeof x === "object" && x !== null ? this.made(pos, name, show(x)) : show(x);
  }

  nodes(nodes: Node[], scope: Scope): void {
    for (const node of nodes) {
      if (node.kind === "text") this.write(node.text, node.pos);
      else if (node.kind === "action") this.write(show(this.pipe(node.pipe, scope)), node.pipe.pos);
      else if (node.kind === "if") {
        const hit = node.branches.find((b) => truthy(this.pipe(b.cond, scope)));
        this.nodes(hit ? hit.body : node.otherwise, scope);
      } else this.range(node, scope);
    }
  }

  range(node: Extract<Node, { kind: "range" }>, scope: Scope): void {
    const value = this.pipe(node.pipe, scope);
    let entries: [unknown, unknown][];
    if (Array.isArray(value)) entries = value.map((v, i) => [i, v]);
    else if (isMap(value))
      entries = Object.keys(value)
        .sort()
        .map((k) => [k, value[k]]);
    else if (value === undefined || value === null) entries = [];
    else throw this.error(node.pipe.pos, `range over ${typeof value} (a list or map is needed)`);
    if (entries.length === 0) {
      this.nodes(node.otherwise, scope);
      return;
    }
    for (const [key, v] of entries) {
      if (++this.iterations > TEMPLATE_MAX_ITERATIONS)
        throw this.error(node.pipe.pos, `more than ${TEMPLATE_MAX_ITERATIONS} loop iterations`);
      const vars = new Map(scope.vars);
      if (node.vars.length === 1) vars.set(node.vars[0] as string, v);
      if (node.vars.length === 2) {
        vars.set(node.vars[0] as string, key);
        vars.set(node.vars[1] as string, v);
      }
      this.nodes(node.body, { dot: v, vars });
    }
  }

  pipe(pipe: Pipe, scope: Scope): unknown {
    let carried: { value: unknown } | undefined;
    for (const cmd of pipe.commands) {
      const value = this.command(cmd, scope, carried, pipe.pos);
      carried = { value };
    }
    return carried?.value;
  }

  arg(a: Arg, scope: Scope): unknown {
    switch (a.kind) {
      case "field":
        return walk(scope.dot, a.path);
      case "var": {
        if (a.name === "$") return walk(this.doc, a.path);
        const name = a.name.slice(1);
        if (!scope.vars.has(name)) throw this.error(a.pos, `undefined variable $${name}`);
        return walk(scope.vars.get(name), a.path);
      }
      case "string":
      case "number":
      case "bool":
        return a.value;
      case "nil":
        return undefined;
      case "pipe":
        return this.pipe(a.pipe, scope);
      case "func":
        throw this.error(a.pos, `function ${a.name} used as a value`);
    }
  }

  command(cmd: Command, scope: Scope, carried: { value: unknown } | undefined, where: Pos): unknown {
    const [head, ...rest] = cmd;
    if (head?.kind !== "func") {
      if (carried || rest.length > 0) {
        const pos = head && "pos" in head ? head.pos : head?.kind === "pipe" ? head.pipe.pos : where;
        throw this.error(pos, "only a function takes arguments (or a piped value)");
      }
      return this.arg(head as Arg, scope);
    }
    const args = rest.map((a) => this.arg(a, scope));
    if (carried) args.push(carried.value);
    return this.call(head.name, args, head.pos);
  }

  call(name: string, args: unknown[], pos: Pos): unknown {
    const need = (n: number) => {
      if (args.length !== n) throw this.error(pos, `${name} takes ${n} argument(s), got ${args.length}`);
    };
    switch (name) {
      case "reading":
        need(1);
        if (typeof args[0] !== "string")
          throw this.error(pos, 'reading takes a path such as "GPU.smi.gpu-count"');
        return lookupReading(this.doc, args[0]);
      case "default":
        need(2);
        return truthy(args[1]) ? args[1] : args[0];
      case "eq":
        need(2);
        return this.text(args[0], pos, name) === this.text(args[1], pos, name);
      case "ne":
        need(2);
        return this.text(args[0], pos, name) !== this.text(args[1], pos, name);
      case "not":
        need(1);
        return !truthy(args[0]);
      case "and":
        if (args.length < 1) throw this.error(pos, "and takes at least one argument");
        return args.find((a) => !truthy(a)) ?? args.at(-1);
      case "or":
        if (args.length < 1) throw this.error(pos, "or takes at least one argument");
        return args.find(truthy) ?? args.at(-1);
      case "len": {
        need(1);
        const x = args[0];
        if (Array.isArray(x) || typeof x === "string") return x.length;
        if (isMap(x)) return Object.keys(x).length;
        return 0;
      }
      case "index": {
        if (args.length < 2) throw this.error(pos, "index takes a value and at least one key");
        return walk(
          args[0],
          args.slice(1).map((k) => this.text(k, pos, name)),
        );
      }
      case "lower":
        need(1);
        return this.made(pos, name, this.text(args[0], pos, name).toLowerCase());
      case "upper":
        need(1);
        return this.made(pos, name, this.text(args[0], pos, name).toUpperCase());
      case "join": {
        need(2);
        const list = args[1];
        if (!Array.isArray(list)) return this.text(list, pos, name);
        const sep = this.text(args[0], pos, name);
        // the length is known before joining: a long separator times a long list is refused unbuilt
        let length = list.length > 0 ? sep.length * (list.length - 1) : 0;
        this.tooLong(pos, name, length);
        const parts: string[] = [];
        for (const item of list) {
          const part = this.text(item, pos, name);
          length += part.length;
          this.tooLong(pos, name, length);
          parts.push(part);
        }
        return this.made(pos, name, parts.join(sep));
      }
      case "json": {
        need(1);
        const x = args[0];
        // a string's JSON is at least the string and its two quotes: refused before it is quoted
        if (typeof x === "string") this.tooLong(pos, name, x.length + 2);
        return this.made(pos, name, JSON.stringify(x ?? null));
      }
    }
    throw this.error(pos, `unknown function ${name}`);
  }
}

/** Renders the parsed template over the snapshot; bounded in output, values made, work and iterations. */
export function renderTemplate(tpl: Template, doc: Snapshot): string {
  const r = new Renderer(tpl, doc);
  r.nodes(tpl.nodes, { dot: doc, vars: new Map() });
  return r.out.join("");
}

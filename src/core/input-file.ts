/**
 * The one reader of every file the operator names (kubeconfig, recipe, snapshot, diff and fleet
 * inputs, image archive, CA file, cluster-config, template, provider dumps, --config) and of the
 * password on stdin. Before a byte is read:
 *  - the path is stat'ed (a symlink the operator gave is followed: reading is not writing) and must be
 *    a regular file — a directory, FIFO, socket or device is refused without being opened (opening a
 *    FIFO blocks until a writer comes; /dev/zero never ends);
 *  - its size must be within the kind's cap (INPUT_LIMITS, stated in README's "Security");
 *  - it is opened non-blocking and fstat'ed again, so a file swapped for a FIFO in between is refused.
 * The read stops at the cap (a file that grew is refused on the bytes read) and at a deadline between
 * chunks. Text kinds must be UTF-8: invalid bytes are refused with their offset, never replaced.
 * Every message names the flag, the path and the problem — never a byte of the file's contents.
 */
import { X509Certificate } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync, type Stats, statSync } from "node:fs";
import { AicrError } from "./errors.ts";

const MiB = 1024 * 1024;

/** The cap of each kind of input, in bytes (README "Security" lists them). */
export const INPUT_LIMITS = {
  kubeconfig: 16 * MiB,
  /** A certificate, key or CA bundle a kubeconfig or --ca-file names. */
  pem: 1 * MiB,
  config: 1 * MiB,
  recipe: 1 * MiB,
  /**
   * One snapshot: twice what a ConfigMap (the agent's channel) can carry. The strict YAML reader
   * takes about 130 bytes of memory per byte, so the cap bounds memory too.
   */
  snapshot: 2 * MiB,
  /** A whole fleet for aicr diff --fleet: a directory's files together, or one multi-document file. */
  fleet: 256 * MiB,
  clusterConfig: 1 * MiB,
  providerDump: 1 * MiB,
  template: 256 * 1024,
  /** A Docker config.json: credentials only. */
  dockerConfig: 4 * MiB,
  /** An OCI image archive for aicr image push. */
  archive: 2048 * MiB,
  /** --password-stdin. */
  password: 64 * 1024,
  /** A kubeconfig user's token-file (a ServiceAccount token is about 1 KiB). */
  token: 64 * 1024,
} as const;

/** A read that has not finished within this is given up (a hung network filesystem). */
export const INPUT_READ_DEADLINE_MS = 60_000;

const CHUNK = 4 * MiB;

export interface InputSpec {
  /** How the value is named in messages: the flag (`--recipe`), or the thing (`kubeconfig`). */
  flag: string;
  /** What the file should be, for the remedy: "a recipe file written as YAML". */
  what: string;
  maxBytes: number;
  /** The remedy, when the default ("pass <what>") says too little. */
  remedy?: string;
}

const sizeText = (n: number): string =>
  n >= MiB && n % MiB === 0
    ? `${n / MiB} MiB`
    : n >= 1024 && n % 1024 === 0
      ? `${n / 1024} KiB`
      : `${n} bytes`;

/** The file type a mode names, for a refusal ("a named pipe"). */
export function fileKind(mode: number): string {
  const type = mode & 0o170000;
  if (type === 0o040000) return "a directory";
  if (type === 0o010000) return "a named pipe";
  if (type === 0o140000) return "a socket";
  if (type === 0o020000) return "a character device";
  if (type === 0o060000) return "a block device";
  return "not a regular file";
}

/** The refusal of an input: INVALID_REQUEST naming the flag and path, never the contents. */
export function inputError(spec: InputSpec, path: string, problem: string): AicrError {
  return new AicrError("INVALID_REQUEST", `${spec.flag} ${JSON.stringify(path)}: ${problem}`, {
    remedy: spec.remedy ?? `pass ${spec.what} (a regular file of at most ${sizeText(spec.maxBytes)})`,
    context: { field: spec.flag, value: path },
  });
}

function errnoProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case "ENOENT":
      return "no such file";
    case "ENOTDIR":
      return "no such file (a part of the path is not a directory)";
    case "EACCES":
    case "EPERM":
      return "not readable (permission denied)";
    case "ELOOP":
      return "a loop of symbolic links";
    case "ENAMETOOLONG":
      return "the path is too long";
    default:
      return `cannot be read (${code ?? "unknown error"})`;
  }
}

function checkStat(spec: InputSpec, path: string, st: Stats): void {
  if (!st.isFile()) throw inputError(spec, path, `${fileKind(st.mode)}, not a regular file`);
  if (st.size > spec.maxBytes)
    throw inputError(
      spec,
      path,
      `${st.size} bytes, above the ${sizeText(spec.maxBytes)} limit of ${spec.what}`,
    );
}

/**
 * The bytes of a regular file of at most `spec.maxBytes`. `now` is the clock the deadline reads
 * (tests pass their own).
 */
export function readInputBytes(path: string, spec: InputSpec, now: () => number = Date.now): Uint8Array {
  if (path === "") throw inputError(spec, path, "an empty path");
  if (path.includes("\0")) throw inputError(spec, path, "the path holds a NUL byte");
  let fd: number | undefined;
  try {
    const before = statSync(path);
    checkStat(spec, path, before);
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    const st = fstatSync(fd);
    checkStat(spec, path, st);
    if (st.ino !== before.ino || st.dev !== before.dev)
      throw inputError(spec, path, "replaced by another file while it was opened");
    const deadline = now() + INPUT_READ_DEADLINE_MS;
    // Sized from the stat, plus one byte: a file that grew since is read on (bounded) or refused.
    let buf = Buffer.allocUnsafe(Math.min(st.size, spec.maxBytes) + 1);
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, spec.maxBytes + 1));
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
      const got = readSync(fd, buf, n, Math.min(CHUNK, buf.length - n), null);
      if (got === 0) break;
      n += got;
      if (n > spec.maxBytes)
        throw inputError(spec, path, `more than ${sizeText(spec.maxBytes)}, the limit of ${spec.what}`);
      if (now() > deadline)
        throw inputError(
          spec,
          path,
          `not read within ${INPUT_READ_DEADLINE_MS / 1000} s (a stalled filesystem?)`,
        );
    }
    return new Uint8Array(buf.buffer, buf.byteOffset, n);
  } catch (err) {
    if (err instanceof AicrError) throw err;
    throw inputError(spec, path, errnoProblem(err));
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** UTF-8 text, or the offset of the first byte that is not (counted in bytes from 0). */
export function decodeUtf8(bytes: Uint8Array): { text: string } | { badOffset: number } {
  try {
    return { text: utf8.decode(bytes) };
  } catch {
    return { badOffset: firstInvalidUtf8(bytes) };
  }
}

/** The offset of the first byte of an invalid UTF-8 sequence (RFC 3629: no overlongs, no surrogates). */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i] as number;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const d = b[i + k];
      if (d === undefined) return i;
      if (k === 1 ? d < lo || d > hi : d < 0x80 || d > 0xbf) return i;
    }
    i += need + 1;
  }
  return b.length;
}

/** The text of a regular UTF-8 file of at most `spec.maxBytes` (a leading BOM is dropped). */
export function readInputText(path: string, spec: InputSpec): string {
  return textOf(readInputBytes(path, spec), spec, path);
}

function textOf(bytes: Uint8Array, spec: InputSpec, path: string): string {
  const decoded = decodeUtf8(bytes);
  if ("badOffset" in decoded)
    throw inputError(spec, path, `not UTF-8 text (an invalid byte at offset ${decoded.badOffset})`);
  return decoded.text.startsWith("\uFEFF") ? decoded.text.slice(1) : decoded.text;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * A CA bundle a --ca-file names (kind "pem"): PEM text holding one certificate or more, each of which
 * parses as X.509 — a damaged one is refused here, by its place in the file, not later as a failed
 * handshake. Returned as read (the TLS options take the PEM text).
 */
export function readCaFile(path: string, spec: InputSpec): string {
  const text = readInputText(path, spec);
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  const refuse = (problem: string) =>
    new AicrError("INVALID_REQUEST", `${spec.flag} ${JSON.stringify(path)} ${problem}`, {
      remedy: "pass the CA certificate in PEM form (-----BEGIN CERTIFICATE-----)",
      context: { field: spec.flag, value: path },
    });
  if (blocks.length === 0) throw refuse("holds no PEM certificate");
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch {
      throw refuse(`holds a damaged certificate (PEM block ${i + 1} of ${blocks.length} is not X.509)`);
    }
  }
  return text;
}

/**
 * Standard input as UTF-8 text of at most `spec.maxBytes` (--password-stdin): a terminal, pipe or
 * file alike, read until its end; more than the cap is refused as soon as it is seen.
 */
export async function readStdinText(spec: InputSpec, given?: ReadableStream<Uint8Array>): Promise<string> {
  if (!given) {
    // `< dir` opens a directory as stdin: reading it fails with EISDIR, so it is refused first
    let mode: number | undefined;
    try {
      mode = fstatSync(0).mode;
    } catch {
      mode = undefined;
    }
    if (mode !== undefined && (mode & 0o170000) === 0o040000)
      throw inputError(spec, "-", "standard input is a directory");
  }
  const stream = given ?? Bun.stdin.stream();
  const chunks: Uint8Array[] = [];
  let n = 0;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      n += value.length;
      if (n > spec.maxBytes)
        throw inputError(
          spec,
          "-",
          `more than ${sizeText(spec.maxBytes)} on standard input, the limit of ${spec.what}`,
        );
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof AicrError) throw err;
    throw inputError(spec, "-", `standard input ${errnoProblem(err)}`);
  } finally {
    reader.releaseLock();
  }
  return textOf(Buffer.concat(chunks), spec, "-");
}

/**
 * Where a JSON parse error is, as `at line L, column C` — JSON.parse says neither, and its message
 * quotes the text it stopped at (part of a stored credential, in a Docker config). The position is
 * the first character the JSON grammar cannot take, found by a scan of strings, brackets and commas;
 * a text that scans clean (the error is in a literal's spelling) gets "(no position given)".
 */
export function jsonErrorAt(text: string): string {
  let line = 1;
  let col = 1;
  const at = () => `at line ${line}, column ${col}`;
  const stack: string[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      if (c === "\\") {
        i++;
        col++;
      } else if (c === '"') inString = false;
      else if (c === "\n" || c.charCodeAt(0) < 0x20) return at();
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") stack.push(c === "{" ? "}" : "]");
    else if (c === "}" || c === "]") {
      if (stack.pop() !== c) return at();
    } else if (/[0-9a-zA-Z.+-]/.test(c)) {
      // a bare word: one of JSON's three literals or a number, else the error is here
      const word = /^[0-9a-zA-Z.+-]+/.exec(text.slice(i, i + 64))?.[0] ?? c;
      if (!/^(true|false|null|-?\d+(\.\d+)?([eE][+-]?\d+)?)$/.test(word)) return at();
      i += word.length - 1;
      col += word.length - 1;
    } else if (!/[\s,:]/.test(c)) return at();
    if (c === "\n") {
      line++;
      col = 1;
    } else col++;
  }
  return inString || stack.length > 0
    ? `at line ${line}, column ${col} (the text ends early)`
    : "(no position given)";
}

/**
 * Where a YAML parse error is — `line L, column C` and the parser's code — and nothing of the text
 * around it: the `yaml` package's message quotes the source (a kubeconfig's token, a file's first
 * line), so it never reaches a message.
 */
export function yamlErrorAt(err: unknown): string {
  const e = err as {
    linePos?: [{ line: number; col: number }];
    code?: string;
    mark?: { line: number; column: number };
  };
  const code = typeof e?.code === "string" && /^[A-Z_]+$/.test(e.code) ? ` (${e.code})` : "";
  if (e?.linePos?.[0]) return `at line ${e.linePos[0].line}, column ${e.linePos[0].col}${code}`;
  // js-yaml (client-node's parser): 0-based mark
  if (e?.mark && typeof e.mark.line === "number")
    return `at line ${e.mark.line + 1}, column ${e.mark.column + 1}`;
  return "(no position given)";
}

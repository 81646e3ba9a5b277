import { readFileSync, statSync } from "node:fs";
import { AicrError } from "../core/errors.ts";
import { PROVIDER_KINDS, PROVIDER_SOURCES, type ProviderKind, projectProvider } from "./_providers.ts";
import { parseTemplate, TEMPLATE_MAX_BYTES, type Template } from "./_template.ts";
import type { Subtype } from "./schema.ts";

/** A provider dump is at most this large (the cloud CLIs print a few KiB per pool). */
export const PROVIDER_MAX_BYTES = 1024 * 1024;

function bad(flag: string, path: string, detail: string, remedy: string): AicrError {
  return new AicrError("INVALID_REQUEST", `invalid ${flag} ${JSON.stringify(path)}: ${detail}`, {
    remedy,
    context: { field: flag, value: path },
  });
}

function kindOf(mode: number): string {
  const type = mode & 0o170000;
  if (type === 0o040000) return "a directory";
  if (type === 0o010000) return "a named pipe";
  if (type === 0o140000) return "a socket";
  if (type === 0o020000 || type === 0o060000) return "a device";
  return "not a regular file";
}

/**
 * An input file, checked before the first request: the operator's path is followed (a symlink is
 * fine) but its target must be a regular file of at most `maxBytes` — never a directory, pipe, socket
 * or device, which is refused without being opened. The size is checked again on the bytes read.
 */
export function readInputFile(flag: string, path: string, maxBytes: number): string {
  const remedy = `pass a regular file of at most ${maxBytes} bytes to ${flag}`;
  if (path === "") throw bad(flag, path, "empty path", remedy);
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw bad(
      flag,
      path,
      code === "ENOENT" ? "no such file" : `cannot be read (${code ?? String(err)})`,
      remedy,
    );
  }
  if (!st.isFile()) throw bad(flag, path, `${kindOf(st.mode)}, not a regular file`, remedy);
  if (st.size > maxBytes) throw bad(flag, path, `${st.size} bytes, more than ${maxBytes}`, remedy);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw bad(flag, path, `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`, remedy);
  }
  if (bytes.length > maxBytes) throw bad(flag, path, `more than ${maxBytes} bytes`, remedy);
  return bytes.toString("utf8");
}

/** The K8s subtypes projected from the provider files given (flag order: oke, aks, gke). */
export function readProviderDumps(files: Partial<Record<ProviderKind, string>>): Subtype[] {
  const out: Subtype[] = [];
  for (const kind of PROVIDER_KINDS) {
    const path = files[kind];
    if (path === undefined) continue;
    const flag = `--${kind}`;
    const content = readInputFile(flag, path, PROVIDER_MAX_BYTES);
    out.push(projectProvider(kind, content, path));
  }
  return out;
}

/** The --template file, read and parsed (errors by line:column) before the first request. */
export function loadTemplate(path: string): Template {
  return parseTemplate(readInputFile("--template", path, TEMPLATE_MAX_BYTES), path);
}

export { PROVIDER_SOURCES };

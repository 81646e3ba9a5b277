import { INPUT_LIMITS, readInputText } from "../core/input-file.ts";
import { PROVIDER_KINDS, PROVIDER_SOURCES, type ProviderKind, projectProvider } from "./_providers.ts";
import { parseTemplate, TEMPLATE_MAX_BYTES, type Template } from "./_template.ts";
import type { Subtype } from "./schema.ts";

/** A provider dump is at most this large (the cloud CLIs print a few KiB per pool). */
export const PROVIDER_MAX_BYTES = INPUT_LIMITS.providerDump;

/**
 * An input file, checked before the first request through the one bounded reader
 * (core/input-file.ts): a regular UTF-8 file of at most `maxBytes`, never a directory, pipe, socket
 * or device.
 */
export function readInputFile(flag: string, path: string, maxBytes: number): string {
  return readInputText(path, { flag, what: `a ${flag} file`, maxBytes });
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

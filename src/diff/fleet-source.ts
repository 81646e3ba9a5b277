import type { Stats } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import { AicrError } from "../core/errors.ts";
import { INPUT_LIMITS, readInputText } from "../core/input-file.ts";
import type { Logger } from "../core/log.ts";
import { envelopeMissingMessage, parseSnapshot, type Snapshot } from "../snapshot/schema.ts";
import type { FleetBaseline, FleetNode } from "./fleet.ts";

/**
 * --fleet <dir|file>: the fleet's snapshots, every one read and checked before anything is printed.
 * A directory: each *.yaml, *.yml, *.json file is one node (fleet.json, the run's own summary that
 * `aicr snapshot --all-nodes -o <dir>/` writes beside them, is not a snapshot and is skipped); a file:
 * one YAML stream, a `---` line between nodes. A node is named by metadata.source-node, else by its
 * file's name without the extension (in a stream: `<stem>#<n>`, its position from 1).
 */

/** More nodes than this is refused: far beyond any fleet one run captures. */
export const FLEET_MAX_NODES = 10_000;
/** One snapshot (a file in the directory, or one document of a stream). */
export const FLEET_MAX_DOCUMENT_BYTES = INPUT_LIMITS.snapshot;
/** The whole fleet. */
export const FLEET_MAX_TOTAL_BYTES = INPUT_LIMITS.fleet;

const SNAPSHOT_EXTENSIONS = new Set([".yaml", ".yml", ".json"]);
const FLEET_SUMMARY = "fleet.json";
const MiB = 1024 * 1024;

export interface LoadedFleet {
  /** The --fleet value. */
  source: string;
  nodes: FleetNode[];
}

const invalid = (message: string, remedy: string, value: string, field = "--fleet"): AicrError =>
  new AicrError("INVALID_REQUEST", message, { remedy, context: { field, value } });

async function statOf(flag: string, path: string): Promise<Stats> {
  try {
    return await stat(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" ? "no such file or directory" : `cannot be read (${code ?? "unknown error"})`;
    throw new AicrError("INVALID_REQUEST", `cannot read ${flag} ${JSON.stringify(path)}: ${why}`, {
      remedy: `pass a directory written by aicr snapshot --all-nodes -o <dir>/, or the multi-document YAML it prints`,
      context: { field: flag, value: path },
    });
  }
}

function checkSize(path: string, size: number, limit: number, what: string, flag = "--fleet"): void {
  if (size > limit) {
    throw invalid(
      `${flag} ${JSON.stringify(path)}: ${size} bytes, above the ${limit / MiB} MiB limit of ${what}`,
      "pass the snapshots aicr snapshot wrote, without unrelated large files",
      path,
      flag,
    );
  }
}

/** A stream split at its document markers (`---` or `...` at the start of a line, as YAML defines). */
export function splitDocuments(text: string): string[] {
  const docs: string[] = [];
  let current: string[] = [];
  const flush = () => {
    const body = current.join("\n");
    const meaningful = current.some((l) => l.trim() !== "" && !l.trimStart().startsWith("#"));
    if (meaningful) docs.push(body);
    current = [];
  };
  for (const line of text.split(/\r?\n/)) {
    if (/^(---|\.\.\.)(\s|$)/.test(line)) {
      flush();
      // `--- {...}` or `--- key: v` carries content on the marker's line.
      const rest = line.startsWith("---") ? line.slice(3).trim() : "";
      if (rest !== "") current.push(rest);
    } else current.push(line);
  }
  flush();
  return docs;
}

interface RawDocument {
  /** How errors name it: the file, or `<file> (document <n>)`. */
  source: string;
  /** The name used when the document has no metadata.source-node. */
  fallbackName: string;
  text: string;
}

async function directoryDocuments(dir: string): Promise<RawDocument[]> {
  const entries = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => SNAPSHOT_EXTENSIONS.has(extname(e.name).toLowerCase()) && e.name !== FLEET_SUMMARY)
    .map((e) => e.name)
    .sort();
  if (entries.length === 0) {
    throw invalid(
      `--fleet ${JSON.stringify(dir)} holds no snapshot: expected *.yaml, *.yml or *.json files, one per node`,
      "pass the directory aicr snapshot --all-nodes -o <dir>/ wrote",
      dir,
    );
  }
  if (entries.length > FLEET_MAX_NODES) {
    throw invalid(
      `--fleet ${JSON.stringify(dir)} holds ${entries.length} snapshot files, above the limit of ${FLEET_MAX_NODES}`,
      "compare the fleet in parts (one directory per part)",
      dir,
    );
  }
  // Every file's kind and size checked before any is read (stat first: opening a FIFO would block).
  let total = 0;
  for (const name of entries) {
    const path = join(dir, name);
    const s = await statOf("--fleet", path);
    if (!s.isFile()) {
      throw invalid(
        `--fleet ${JSON.stringify(path)} is not a regular file`,
        "remove it from the directory, or pass the snapshots' directory alone",
        path,
      );
    }
    checkSize(path, s.size, FLEET_MAX_DOCUMENT_BYTES, "one snapshot");
    total += s.size;
    checkSize(dir, total, FLEET_MAX_TOTAL_BYTES, "a fleet");
  }
  const docs: RawDocument[] = [];
  for (const name of entries) {
    const path = join(dir, name);
    docs.push({
      source: path,
      fallbackName: basename(name, extname(name)),
      text: readInputText(path, {
        flag: "--fleet",
        what: "one snapshot",
        maxBytes: FLEET_MAX_DOCUMENT_BYTES,
      }),
    });
  }
  return docs;
}

async function streamDocuments(path: string, size: number): Promise<RawDocument[]> {
  checkSize(path, size, FLEET_MAX_TOTAL_BYTES, "a fleet");
  const texts = splitDocuments(
    readInputText(path, { flag: "--fleet", what: "a fleet", maxBytes: FLEET_MAX_TOTAL_BYTES }),
  );
  if (texts.length === 0) {
    throw invalid(
      `--fleet ${JSON.stringify(path)} holds no snapshot document`,
      "pass the multi-document YAML aicr snapshot --all-nodes prints, or a directory of snapshots",
      path,
    );
  }
  if (texts.length > FLEET_MAX_NODES) {
    throw invalid(
      `--fleet ${JSON.stringify(path)} holds ${texts.length} documents, above the limit of ${FLEET_MAX_NODES}`,
      "compare the fleet in parts",
      path,
    );
  }
  const stem = basename(path, extname(path));
  const one = texts.length === 1;
  return texts.map((text, i) => {
    const source = one ? path : `${path} (document ${i + 1})`;
    checkSize(source, Buffer.byteLength(text), FLEET_MAX_DOCUMENT_BYTES, "one snapshot");
    return { source, fallbackName: one ? stem : `${stem}#${i + 1}`, text };
  });
}

const parse = (doc: RawDocument, log: Logger): Snapshot =>
  parseSnapshot(doc.text, doc.source, {
    onEnvelopeMissing: (source) => log.warn(envelopeMissingMessage(source)),
  });

/** Reads and checks the whole fleet; a duplicate node name is INVALID_REQUEST naming both sources. */
export async function loadFleet(path: string, log: Logger): Promise<LoadedFleet> {
  const s = await statOf("--fleet", path);
  if (!s.isDirectory() && !s.isFile()) {
    throw invalid(
      `--fleet ${JSON.stringify(path)} is neither a directory nor a regular file`,
      "pass a directory of snapshots or one multi-document YAML file",
      path,
    );
  }
  const docs = s.isDirectory() ? await directoryDocuments(path) : await streamDocuments(path, s.size);
  const nodes: FleetNode[] = [];
  const sourceOf = new Map<string, string>();
  for (const doc of docs) {
    const snapshot = parse(doc, log);
    const name = snapshot.metadata["source-node"] || doc.fallbackName;
    const earlier = sourceOf.get(name);
    if (earlier !== undefined) {
      throw invalid(
        `node ${JSON.stringify(name)} appears twice in --fleet: ${earlier} and ${doc.source}`,
        "keep one snapshot per node (a node is named by metadata.source-node, else by its file name)",
        path,
      );
    }
    sourceOf.set(name, doc.source);
    nodes.push({ name, snapshot });
  }
  return { source: path, nodes };
}

/**
 * --baseline in fleet mode: a node of the fleet by its name, else a snapshot file. A node name wins
 * over a file of the same name (the fleet's names are what the report shows).
 */
export async function resolveFleetBaseline(
  value: string,
  fleet: LoadedFleet,
  log: Logger,
): Promise<FleetBaseline> {
  const node = fleet.nodes.find((n) => n.name === value);
  if (node) return { name: node.name, snapshot: node.snapshot, member: true };
  let s: Stats | undefined;
  try {
    s = await stat(value);
  } catch {
    s = undefined;
  }
  if (!s?.isFile()) {
    const names = fleet.nodes.map((n) => n.name).sort();
    const shown =
      names.length > 5 ? `${names.slice(0, 5).join(", ")} +${names.length - 5} more` : names.join(", ");
    throw new AicrError(
      "INVALID_REQUEST",
      `--baseline ${JSON.stringify(value)} is neither a node of the fleet (${shown}) nor a snapshot file`,
      {
        remedy: "pass a node name from the fleet, or the path of a snapshot file written by aicr snapshot",
        context: { field: "--baseline", value },
      },
    );
  }
  checkSize(value, s.size, FLEET_MAX_DOCUMENT_BYTES, "one snapshot", "--baseline");
  const text = readInputText(value, {
    flag: "--baseline",
    what: "one snapshot",
    maxBytes: FLEET_MAX_DOCUMENT_BYTES,
  });
  return {
    name: value,
    snapshot: parse({ source: value, fallbackName: value, text }, log),
    member: false,
  };
}

import type { Dirent } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { posix } from "node:path";
import { hostPath } from "./_host-fs.ts";
import { sysctlReadings } from "./_os-parse.ts";
import { type CollectorOptions, errorText, type Readings, throwIfAborted } from "./_types.ts";

const SYSCTL_ROOT = "/proc/sys";
// Network settings are per network namespace (the pod's, not the node's) and cdrom is noise.
const SKIPPED_DIRS = new Set(["/proc/sys/net", "/proc/sys/dev/cdrom"]);
// Enough parallel reads to hide syscall latency on a 2-core box without flooding the event loop.
const READ_CONCURRENCY = 32;

interface WalkState {
  readonly options: CollectorOptions;
  readonly files: string[];
  skipped: number;
}

async function listDir(state: WalkState, dir: string): Promise<Dirent[]> {
  try {
    return await readdir(hostPath(state.options.hostRoot, dir), { withFileTypes: true });
  } catch (err) {
    state.skipped++;
    state.options.log.debug("sysctl: skipping unreadable directory", { path: dir, cause: errorText(err) });
    return [];
  }
}

/** Breadth-first, directories listed in parallel; symlinks and anything not a plain file are never followed. */
async function collectPaths(state: WalkState): Promise<void> {
  let level = [SYSCTL_ROOT];
  while (level.length > 0) {
    throwIfAborted(state.options.signal);
    const listings = await Promise.all(level.map((dir) => listDir(state, dir)));
    const next: string[] = [];
    listings.forEach((entries, i) => {
      const dir = level[i] as string;
      for (const entry of entries) {
        const path = posix.join(dir, entry.name);
        if (entry.isDirectory() && !SKIPPED_DIRS.has(path)) next.push(path);
        else if (entry.isFile()) state.files.push(path);
      }
    });
    level = next;
  }
}

async function readAll(state: WalkState): Promise<Map<string, string>> {
  const contents = new Map<string, string>();
  let cursor = 0;
  const worker = async (): Promise<void> => {
    while (cursor < state.files.length) {
      throwIfAborted(state.options.signal);
      const path = state.files[cursor++] as string;
      try {
        contents.set(path, await readFile(hostPath(state.options.hostRoot, path), "utf8"));
      } catch {
        // Write-only and restricted entries are expected under /proc/sys; they are simply not readings.
        state.skipped++;
      }
    }
  };
  await Promise.all(Array.from({ length: READ_CONCURRENCY }, worker));
  return contents;
}

/** Walks /proc/sys beneath the host root; keys are the paths as the host sees them (`/proc/sys/kernel/osrelease`). */
export async function collectSysctl(options: CollectorOptions): Promise<Readings | undefined> {
  const state: WalkState = { options, files: [], skipped: 0 };
  await collectPaths(state);
  if (state.files.length === 0) return undefined;
  const contents = await readAll(state);
  const out: Readings = {};
  for (const path of [...state.files].sort()) {
    const content = contents.get(path);
    if (content !== undefined) Object.assign(out, sysctlReadings(path, content));
  }
  if (state.skipped > 0) options.log.debug("sysctl: entries skipped", { count: state.skipped });
  return out;
}

import { AicrError } from "../core/errors.ts";

/** Longest file-name stem kept (most filesystems cap a name at 255 bytes). */
const MAX_STEM = 200;

/**
 * A context name as a file-name stem: letters, digits, `.`, `_` and `-` kept; every other run of
 * characters (`/`, `:`, `@`, spaces, non-ASCII) becomes one `_`; a leading `.` becomes `_` (no hidden
 * file, never `.` or `..`); at most 200 characters; an empty result is `_` (pure).
 */
export function sanitizeContextFileName(context: string): string {
  const stem = context
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^\./, "_")
    .slice(0, MAX_STEM);
  return stem === "" ? "_" : stem;
}

/**
 * Each context's file name `<stem>.<ext>`, in order. Two contexts whose names sanitise to the same
 * file (compared case-insensitively, as macOS and Windows filesystems do) are refused: INVALID_REQUEST
 * naming both, before anything is sent (pure).
 */
export function contextFileNames(contexts: readonly string[], ext: string): Map<string, string> {
  const out = new Map<string, string>();
  const byKey = new Map<string, string>();
  for (const context of contexts) {
    const file = `${sanitizeContextFileName(context)}.${ext}`;
    const key = file.toLowerCase();
    const other = byKey.get(key);
    if (other !== undefined)
      throw new AicrError(
        "INVALID_REQUEST",
        `contexts ${JSON.stringify(other)} and ${JSON.stringify(context)} would both be written to ${JSON.stringify(file)}`,
        {
          remedy:
            "leave one of them out, or rename one (kubectl config rename-context <old> <new>) so their file names differ",
          context: { field: "--context", value: [other, context] },
        },
      );
    byKey.set(key, context);
    out.set(context, file);
  }
  return out;
}

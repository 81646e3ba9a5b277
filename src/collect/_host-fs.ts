import { lstat, readFile, readlink } from "node:fs/promises";
import { posix } from "node:path";

const MAX_LINK_HOPS = 8;

/** The host path `abs` (an absolute path as seen on the host) beneath the host root. */
export function hostPath(hostRoot: string, abs: string): string {
  return posix.join(hostRoot || "/", abs);
}

/**
 * Resolves `abs` inside the host root the way the host would: an absolute symlink target (common for
 * /etc/os-release) is re-rooted instead of escaping into the container's own filesystem.
 */
async function resolveInRoot(hostRoot: string, abs: string): Promise<string> {
  let current = posix.normalize(abs);
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    const full = hostPath(hostRoot, current);
    const info = await lstat(full);
    if (!info.isSymbolicLink()) return full;
    const target = await readlink(full);
    current = target.startsWith("/") ? posix.normalize(target) : posix.join(posix.dirname(current), target);
  }
  throw Object.assign(new Error(`too many levels of symbolic links at ${abs}`), { code: "ELOOP" });
}

/** Reads a host file as text; undefined when it does not exist. Other errors are thrown. */
export async function readHostFile(hostRoot: string, abs: string): Promise<string | undefined> {
  try {
    return await readFile(await resolveInRoot(hostRoot, abs), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** The first of `candidates` that exists, with its content. */
export async function readFirstHostFile(
  hostRoot: string,
  candidates: readonly string[],
): Promise<{ path: string; content: string } | undefined> {
  for (const path of candidates) {
    const content = await readHostFile(hostRoot, path);
    if (content !== undefined) return { path, content };
  }
  return undefined;
}

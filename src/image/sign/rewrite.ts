/**
 * Replaces a file's content atomically: a fresh temp file beside it (O_CREAT|O_EXCL|O_NOFOLLOW, the
 * original's permission bits), written and fsync'ed, then renamed over the original, and the
 * directory fsync'ed. A reader sees the old archive or the new one, never half of one. The target
 * must still be the regular file that was read (same inode, size and mtime): a symlink put there, or
 * a file changed meanwhile, is refused and left alone.
 */
import { randomBytes } from "node:crypto";
import { constants, lstatSync, type Stats } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { AicrError } from "../../core/errors.ts";

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

function unchanged(path: string, before: Stats): void {
  let now: Stats | undefined;
  try {
    now = lstatSync(path);
  } catch {
    now = undefined;
  }
  if (
    !now?.isFile() ||
    now.ino !== before.ino ||
    now.dev !== before.dev ||
    now.size !== before.size ||
    now.mtimeMs !== before.mtimeMs
  )
    throw new AicrError(
      "CONFLICT",
      `${JSON.stringify(path)} was ${now ? (now.isSymbolicLink() ? "replaced by a symlink" : "changed") : "removed"} while it was being signed; nothing was written`,
      { remedy: "sign it again once nothing else writes it", context: { path } },
    );
}

export async function rewriteFile(path: string, bytes: Uint8Array, before: Stats): Promise<void> {
  unchanged(path, before);
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  let renamed = false;
  try {
    const handle = await open(temp, flags, before.mode & 0o777);
    try {
      await handle.writeFile(bytes);
      await handle.chmod(before.mode & 0o777); // open's mode is masked by the umask
      await handle.sync();
    } finally {
      await handle.close();
    }
    unchanged(path, before);
    await rename(temp, path);
    renamed = true;
    const dirHandle = await open(dir, constants.O_RDONLY);
    try {
      await dirHandle.sync();
    } catch {
      // some filesystems refuse fsync on a directory; the rename itself is done
    } finally {
      await dirHandle.close();
    }
  } catch (err) {
    if (!renamed) await rm(temp, { force: true });
    if (err instanceof AicrError) throw err;
    throw new AicrError("INTERNAL", `cannot rewrite ${JSON.stringify(path)} (${errno(err) ?? "error"})`, {
      remedy:
        "check the free space and the permissions of its directory (the temp file is written beside it)",
      cause: err,
    });
  }
}

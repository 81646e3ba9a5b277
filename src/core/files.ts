import { constants } from "node:fs";
import { chmod, lstat, mkdir, open, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { AicrError } from "./errors.ts";

export interface NewFile {
  file: string;
  content: string;
}

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

/** O_NOFOLLOW + O_EXCL: a link or anything already at the path fails instead of being written through. */
async function writeExclusive(path: string, content: string, mode: number): Promise<void> {
  const handle = await open(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode,
  );
  try {
    await handle.writeFile(content);
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}

/**
 * Creates `<parent>/<name>` (which must not exist in any form, including a symlink) and writes the
 * files into it. On any failure after the directory was made, removes what it wrote.
 */
export async function writeNewDirectory(
  parent: string,
  name: string,
  options: { files: NewFile[]; dirMode?: number; fileMode?: number },
): Promise<string> {
  const dirMode = options.dirMode ?? 0o700;
  const fileMode = options.fileMode ?? 0o600;
  const parentStat = await stat(parent).catch(() => undefined);
  if (!parentStat?.isDirectory()) {
    throw new AicrError(
      "INVALID_REQUEST",
      `the parent directory ${JSON.stringify(parent)} does not exist or is not a directory`,
      {
        remedy: "create it first or pass an existing directory with --dir",
        context: { field: "--dir", value: parent },
      },
    );
  }
  const dir = join(parent, name);
  const existing = await lstat(dir).catch(() => undefined);
  if (existing) {
    const what = existing.isSymbolicLink() ? "a symlink" : existing.isDirectory() ? "a directory" : "a file";
    throw new AicrError("CONFLICT", `${JSON.stringify(dir)} already exists (${what}); nothing was written`, {
      remedy: "remove or rename it, or choose another --dir; each run writes a new directory",
      context: { path: dir },
    });
  }
  try {
    await mkdir(dir, { mode: dirMode });
  } catch (err) {
    if (errno(err) === "EEXIST") {
      throw new AicrError("CONFLICT", `${JSON.stringify(dir)} already exists; nothing was written`, {
        remedy: "remove or rename it, or choose another --dir",
        context: { path: dir },
      });
    }
    throw new AicrError("INTERNAL", `cannot create directory ${JSON.stringify(dir)}`, { cause: err });
  }
  try {
    await chmod(dir, dirMode); // mkdir's mode is masked by the umask
    for (const f of options.files) await writeExclusive(join(dir, f.file), f.content, fileMode);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw new AicrError(
      "INTERNAL",
      `cannot write into ${JSON.stringify(dir)}; removed the partial directory`,
      { cause: err },
    );
  }
  return dir;
}

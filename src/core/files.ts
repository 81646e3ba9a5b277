import { constants } from "node:fs";
import { chmod, lstat, mkdir, open, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
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

/**
 * Writes a file by renaming a fresh temp file over the target, so a reader never sees half a file.
 * Refuses a directory or a symlink at the target: the operator named a file, and a link could point
 * anywhere.
 */
export async function writeFileAtomic(
  path: string,
  content: string,
  options: { flag: string },
): Promise<void> {
  const existing = await lstat(path).catch(() => undefined);
  if (existing?.isSymbolicLink() || existing?.isDirectory()) {
    throw new AicrError(
      "INVALID_REQUEST",
      `refusing to write ${options.flag} ${JSON.stringify(path)}: it is ${existing.isDirectory() ? "a directory" : "a symlink"}`,
      {
        remedy: `name a regular file path for ${options.flag}`,
        context: { field: options.flag, value: path },
      },
    );
  }
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  try {
    await writeExclusive(temp, content, 0o644);
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    const code = errno(err);
    throw new AicrError(
      code === "ENOENT" ? "INVALID_REQUEST" : "INTERNAL",
      `cannot write ${options.flag} ${JSON.stringify(path)}`,
      {
        remedy: code === "ENOENT" ? "create the parent directory first" : undefined,
        cause: err,
      },
    );
  }
}

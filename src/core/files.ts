import { accessSync, constants, lstatSync, realpathSync, type Stats, statSync } from "node:fs";
import { chmod, lstat, mkdir, open, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
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
  options: { files: NewFile[]; dirMode?: number; fileMode?: number; flag?: string },
): Promise<string> {
  const flag = options.flag ?? "--dir";
  const dirMode = options.dirMode ?? 0o700;
  const fileMode = options.fileMode ?? 0o600;
  const parentStat = await stat(parent).catch(() => undefined);
  if (!parentStat?.isDirectory()) {
    throw new AicrError(
      "INVALID_REQUEST",
      `the parent directory ${JSON.stringify(parent)} does not exist or is not a directory`,
      {
        remedy: `create it first or pass an existing directory with ${flag}`,
        context: { field: flag, value: parent },
      },
    );
  }
  const dir = join(parent, name);
  const existing = await lstat(dir).catch(() => undefined);
  if (existing) {
    const what = existing.isSymbolicLink() ? "a symlink" : existing.isDirectory() ? "a directory" : "a file";
    throw new AicrError("CONFLICT", `${JSON.stringify(dir)} already exists (${what}); nothing was written`, {
      remedy: `remove or rename it, or choose another ${flag}; each run writes a new directory`,
      context: { path: dir },
    });
  }
  try {
    await mkdir(dir, { mode: dirMode });
  } catch (err) {
    if (errno(err) === "EEXIST") {
      throw new AicrError("CONFLICT", `${JSON.stringify(dir)} already exists; nothing was written`, {
        remedy: `remove or rename it, or choose another ${flag}`,
        context: { path: dir },
      });
    }
    throw new AicrError("INTERNAL", `cannot create directory ${JSON.stringify(dir)}`, {
      remedy: `check that the parent directory exists and is writable, or choose another ${flag}`,
      cause: err,
    });
  }
  try {
    await chmod(dir, dirMode); // mkdir's mode is masked by the umask
    for (const f of options.files) await writeExclusive(join(dir, f.file), f.content, fileMode);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw new AicrError(
      "INTERNAL",
      `cannot write into ${JSON.stringify(dir)}; removed the partial directory`,
      { remedy: `check the free space and permissions there, or choose another ${flag}`, cause: err },
    );
  }
  return dir;
}

/**
 * The pre-flight of a directory an output flag will create (`--cncf-submission <dir>`): nothing may
 * exist at the path yet (not even a symlink), and its parent must be a writable directory.
 */
export function checkNewDirectoryDestination(path: string, flag: string): void {
  const bad = (problem: string, remedy: string) =>
    new AicrError("INVALID_REQUEST", `${flag} ${JSON.stringify(path)}: ${problem}`, {
      remedy,
      context: { field: flag, value: path },
    });
  let existing: Stats | undefined;
  try {
    existing = lstatSync(path);
  } catch {
    existing = undefined;
  }
  if (existing)
    throw bad(
      `already exists (${existing.isSymbolicLink() ? "a symlink" : existing.isDirectory() ? "a directory" : "a file"}); it must be a new directory`,
      `choose a path that does not exist yet; ${flag} creates it`,
    );
  const parent = dirname(resolve(path));
  let parentStat: Stats | undefined;
  try {
    parentStat = statSync(parent);
  } catch {
    parentStat = undefined;
  }
  if (!parentStat?.isDirectory())
    throw bad(`its parent ${JSON.stringify(parent)} is not a directory`, "create the parent directory first");
  try {
    accessSync(parent, constants.W_OK);
  } catch {
    throw bad(`its parent ${JSON.stringify(parent)} is not writable`, "choose a directory you can write to");
  }
}

/**
 * Writes a file by renaming a fresh temp file over the target, so a reader never sees half a file.
 * Refuses what checkFileDestination refuses (a directory or a symlink at the target: the operator
 * named a file, and a link could point anywhere), checked again here.
 */
export async function writeFileAtomic(
  path: string,
  content: string,
  options: { flag: string },
): Promise<void> {
  // Checked again at the write: minutes may have passed since the pre-flight.
  checkFileDestination(path, options.flag);
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  try {
    await writeExclusive(temp, content, 0o644);
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    // A cause the check can name (the parent removed meanwhile, …) is reported with its own remedy.
    checkFileDestination(path, options.flag);
    throw new AicrError("INTERNAL", `cannot write ${options.flag} ${JSON.stringify(path)}`, {
      remedy: `check the free space and permissions of its directory, or choose another ${options.flag} path`,
      cause: err,
    });
  }
}

/** Filesystems of the kernel's own making: a write there is never a snapshot saved. */
const PSEUDO_FS_ROOTS = ["/proc", "/sys"];

const underPseudoFs = (path: string): string | undefined =>
  PSEUDO_FS_ROOTS.find((root) => path === root || path.startsWith(`${root}/`));

/** What a target that is neither a file, a directory nor a symlink is. */
const describeSpecial = (s: Stats): string =>
  s.isFIFO()
    ? "a named pipe"
    : s.isSocket()
      ? "a socket"
      : s.isCharacterDevice() || s.isBlockDevice()
        ? "a device"
        : "a special file";

/**
 * Everything about a file destination that can be known before the first request, so a run's result
 * is never collected only to be thrown away: the parent is an existing, writable directory; the
 * target, if present, is a regular file (never a directory or a symlink: aicr does not follow links
 * when writing); the path is not under /proc or /sys (the parent's real path included). Each failure
 * is INVALID_REQUEST naming the flag, the value, what is wrong and the remedy for that cause.
 */
export function checkFileDestination(path: string, flag: string): void {
  const fail: (what: string, remedy: string, cause?: unknown) => never = (what, remedy, cause) => {
    throw new AicrError("INVALID_REQUEST", `invalid ${flag} ${JSON.stringify(path)}: ${what}`, {
      remedy,
      context: { field: flag, value: path },
      cause,
    });
  };
  const pseudoRemedy = `choose a path on a regular filesystem for ${flag}`;
  const abs = resolve(path);
  const parent = dirname(abs);
  const lexical = underPseudoFs(abs);
  if (lexical) fail(`it is under ${lexical}, a kernel pseudo-filesystem`, pseudoRemedy);

  let parentStat: Stats;
  try {
    parentStat = statSync(parent);
  } catch (err) {
    const code = errno(err);
    if (code === "ENOENT")
      fail(
        `its parent directory ${JSON.stringify(parent)} does not exist`,
        `create it first (mkdir -p ${JSON.stringify(parent)}) or choose another path for ${flag}`,
      );
    if (code === "ENOTDIR")
      fail(
        `a component of its parent ${JSON.stringify(parent)} is not a directory`,
        `choose a path for ${flag} whose parent is a directory`,
      );
    if (code === "EACCES")
      fail(
        `its parent directory ${JSON.stringify(parent)} cannot be reached (permission denied)`,
        `check the permissions on the path to ${JSON.stringify(parent)}, or choose another path for ${flag}`,
      );
    fail(
      `its parent directory ${JSON.stringify(parent)} cannot be read (${code ?? err})`,
      `choose another path for ${flag}`,
      err,
    );
  }
  // A link into /proc or /sys is caught by the parent's real path.
  const real = (() => {
    try {
      return realpathSync(parent);
    } catch {
      return parent;
    }
  })();
  const linked = underPseudoFs(real);
  if (linked)
    fail(
      `its parent ${JSON.stringify(parent)} resolves to ${JSON.stringify(real)}, under ${linked}, a kernel pseudo-filesystem`,
      pseudoRemedy,
    );
  if (!parentStat.isDirectory())
    fail(
      `its parent ${JSON.stringify(parent)} is not a directory`,
      `choose a path for ${flag} whose parent is a directory`,
    );
  try {
    accessSync(parent, constants.W_OK | constants.X_OK);
  } catch (err) {
    if (errno(err) === "EROFS")
      fail(
        `its parent directory ${JSON.stringify(parent)} is on a read-only filesystem`,
        `choose a path on a writable filesystem for ${flag}`,
      );
    fail(
      `its parent directory ${JSON.stringify(parent)} is not writable by this user`,
      `fix the directory's permissions (or run as a user who may write there), or choose another path for ${flag}`,
    );
  }
  let target: Stats | undefined;
  try {
    target = lstatSync(abs);
  } catch (err) {
    if (errno(err) !== "ENOENT")
      fail(`it cannot be inspected (${errno(err) ?? err})`, `choose another path for ${flag}`, err);
  }
  if (!target || target.isFile()) return;
  if (target.isDirectory())
    fail("it is a directory", `give ${flag} a file name, e.g. ${JSON.stringify(join(path, "<file>"))}`);
  if (target.isSymbolicLink())
    fail(
      "it is a symlink (aicr never writes through a link)",
      `remove the link or choose another path for ${flag}`,
    );
  fail(`it is ${describeSpecial(target)}, not a regular file`, `choose a regular file path for ${flag}`);
}

/** A path a flag names: an output aicr will write, or an input it reads. */
export interface NamedPath {
  flag: string;
  path: string;
}

/**
 * What a path is, for comparing two: an existing file by its device and inode (a symlink or a hard
 * link to it is the same file), a path not there yet by its parent's real path and its name.
 */
function fileIdentity(path: string): string {
  const abs = resolve(path);
  try {
    const s = statSync(abs);
    return `inode:${s.dev}:${s.ino}`;
  } catch {
    try {
      return `path:${join(realpathSync(dirname(abs)), basename(abs))}`;
    } catch {
      return `path:${abs}`;
    }
  }
}

/**
 * Outputs never replace an input or each other: `validate -s s.yaml -o s.yaml` would overwrite the
 * snapshot it reads, `-o r.json --junit r.json` would keep only the last report written. Checked
 * before any request; INVALID_REQUEST naming both flags.
 */
export function checkOutputsApart(outputs: readonly NamedPath[], inputs: readonly NamedPath[]): void {
  const seen = new Map<string, NamedPath>();
  for (const input of inputs) if (input.path) seen.set(fileIdentity(input.path), input);
  const inputIds = new Set(seen.keys());
  for (const output of outputs) {
    if (!output.path) continue;
    const id = fileIdentity(output.path);
    const other = seen.get(id);
    if (other) {
      const what = inputIds.has(id) ? "the input" : "the output";
      throw new AicrError(
        "INVALID_REQUEST",
        `${output.flag} ${JSON.stringify(output.path)} is the same file as ${what} ${other.flag} ${JSON.stringify(other.path)}: writing it would destroy ${inputIds.has(id) ? "what this run reads" : "the other report"}`,
        {
          remedy: `give ${output.flag} a path of its own`,
          context: { field: output.flag, value: output.path },
        },
      );
    }
    seen.set(id, output);
  }
}

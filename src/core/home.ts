import { homedir } from "node:os";

/**
 * $HOME, else the password database's home, else undefined: in a container whose user has no
 * /etc/passwd entry (aicr's own image has none), os.homedir() throws rather than answering.
 */
export function homeDir(
  env: Readonly<Record<string, string | undefined>>,
  lookup: () => string = homedir,
): string | undefined {
  if (env.HOME) return env.HOME;
  try {
    return lookup() || undefined;
  } catch {
    return undefined;
  }
}

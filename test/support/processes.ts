import { existsSync, readFileSync } from "node:fs";

/**
 * Whether the process runs (kill -0; a zombie left to an init that reaps late has ended, so
 * /proc says so where there is one).
 */
export function alive(pid: number): boolean {
  if (Bun.spawnSync(["kill", "-0", String(pid)], { stderr: "ignore" }).exitCode !== 0) return false;
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return !existsSync("/proc/self");
  }
}

/** Whether the process has gone, polling up to 5 s for it. */
export async function goneSoon(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && alive(pid); i++) await Bun.sleep(50);
  return !alive(pid);
}

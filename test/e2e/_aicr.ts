import { existsSync } from "node:fs";
import { join } from "node:path";

/** Runs the compiled binary, never the sources: a broken bytecode build only shows up here. */
export const ROOT = join(import.meta.dir, "../..");
export const AICR = join(ROOT, "dist/aicr");

let built: Promise<void> | undefined;

/** `npm test` builds first; a lone `bun test` builds once here so the binary is never stale-missing. */
export function ensureBuilt(): Promise<void> {
  built ??= (async () => {
    if (existsSync(AICR)) return;
    const proc = Bun.spawn([process.execPath, join(ROOT, "scripts/build.ts")], {
      stdout: "inherit",
      stderr: "inherit",
    });
    if ((await proc.exited) !== 0) throw new Error("npm run build failed; the e2e tests need dist/aicr");
  })();
  return built;
}

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** A minimal, explicit environment: nothing from the developer's shell (KUBECONFIG!) leaks in. */
export function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    NO_COLOR: "1",
    ...extra,
  };
}

export async function aicr(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; stdin?: string } = {},
): Promise<Result> {
  await ensureBuilt();
  const proc = Bun.spawn([AICR, ...args], {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? baseEnv(),
    stdout: "pipe",
    stderr: "pipe",
    stdin: options.stdin === undefined ? "ignore" : new TextEncoder().encode(options.stdin),
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

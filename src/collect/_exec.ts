import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { posix } from "node:path";
import { runWithTimeout } from "../core/async.ts";
import type { Env } from "./_types.ts";

/** The first executable regular file called `name` on the PATH from `env`; undefined when there is none. */
export async function findOnPath(name: string, env: Env): Promise<string | undefined> {
  for (const dir of (env.PATH ?? "").split(":")) {
    if (dir === "") continue;
    const candidate = posix.join(dir, name);
    try {
      if ((await stat(candidate)).isFile()) {
        await access(candidate, constants.X_OK);
        return candidate;
      }
    } catch {
      // Not here; keep looking.
    }
  }
  return undefined;
}

export interface CommandResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env: Env;
  signal: AbortSignal;
  timeoutMs: number;
}

function cleanEnv(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  // A fixed locale keeps the output parseable whatever the node's language is.
  out.LC_ALL = "C";
  return out;
}

/**
 * Runs a command to completion, killing it when the signal aborts or the timeout passes; an abort or
 * timeout rejects, a non-zero exit resolves with its code so the caller decides what it means.
 */
export function runCommand(
  path: string,
  args: readonly string[],
  options: RunOptions,
): Promise<CommandResult> {
  // The rejection does not wait for pipes a killed child's own children may still hold.
  return runWithTimeout(
    async (signal) => {
      const proc = Bun.spawn([path, ...args], {
        env: cleanEnv(options.env),
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      signal.addEventListener("abort", () => proc.kill("SIGKILL"), { once: true });
      const [stdout, stderr, exitCode] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ]);
      return { exitCode, stdout, stderr };
    },
    {
      ms: options.timeoutMs,
      onTimeout: () => new Error(`${posix.basename(path)} did not finish within ${options.timeoutMs} ms`),
      signal: options.signal,
    },
  );
}

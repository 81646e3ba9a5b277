/**
 * Docker credential helpers: `docker-credential-<name> get` with the server on stdin answers
 * `{"ServerURL","Username","Secret"}`. The secret never reaches a log line or an error message.
 */
import { AicrError } from "../../core/errors.ts";
import { cancelled } from "./_http.ts";

export interface HelperAnswer {
  username: string;
  secret: string;
}

const TIMEOUT_MS = 60_000;

/** undefined: the helper has nothing for this server (its documented "not found" answer). */
export async function askHelper(
  helper: string,
  server: string,
  env: Readonly<Record<string, string | undefined>>,
  signal: AbortSignal,
): Promise<HelperAnswer | undefined> {
  const program = `docker-credential-${helper}`;
  const path = Bun.which(program, { PATH: env.PATH ?? "" });
  if (!path) {
    throw new AicrError(
      "INVALID_REQUEST",
      `The Docker config names credential helper ${JSON.stringify(program)}, which is not on PATH`,
      {
        remedy: `install ${program}, remove it from config.json, or pass --username and --password-stdin`,
        context: { helper: program },
      },
    );
  }
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  const proc = Bun.spawn([path, "get"], {
    stdin: new TextEncoder().encode(server),
    stdout: "pipe",
    stderr: "pipe",
    env: env as Record<string, string>,
    signal: AbortSignal.any([signal, timeout]),
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (signal.aborted) throw cancelled(signal);
  if (timeout.aborted) {
    throw new AicrError(
      "UNAUTHORIZED",
      `Credential helper ${JSON.stringify(program)} gave no answer within ${TIMEOUT_MS / 1000} s`,
      {
        remedy: `check ${program} (it may be waiting for an unlock prompt), or pass --username and --password-stdin`,
        context: { helper: program },
      },
    );
  }
  if (code !== 0) {
    // the helpers' shared "credentials not found" wording; no secret can be in it
    if (/credentials not found/i.test(`${out}${err}`)) return undefined;
    throw new AicrError(
      "UNAUTHORIZED",
      `Credential helper ${JSON.stringify(program)} failed for ${JSON.stringify(server)} (exit ${code})`,
      {
        remedy: `run "echo ${server} | ${program} get" to see why, or pass --username and --password-stdin`,
        context: { helper: program, exitCode: code },
      },
    );
  }
  let parsed: { Username?: unknown; Secret?: unknown };
  try {
    parsed = JSON.parse(out) as typeof parsed;
  } catch {
    throw new AicrError(
      "UNAUTHORIZED",
      `Credential helper ${JSON.stringify(program)} answered something other than JSON`,
      {
        remedy: `check ${program} with "echo ${server} | ${program} get", or pass --username and --password-stdin`,
        context: { helper: program },
      },
    );
  }
  if (typeof parsed.Secret !== "string" || parsed.Secret === "") return undefined;
  return { username: typeof parsed.Username === "string" ? parsed.Username : "", secret: parsed.Secret };
}

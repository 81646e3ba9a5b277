/** check-nvidia-smi's one command: `nvidia-smi -q -x` from PATH, bounded in time, as a GPU count or a reason. */
import { runWithTimeout } from "../../core/async.ts";
import { type SmiReading, smiGpuCount } from "./_checks.ts";

export const SMI_TIMEOUT_MS = 30_000;

/** Never throws for the command's own failures: they are the check's verdict. A cancel still rejects. */
export async function readNvidiaSmi(
  env: Readonly<Record<string, string | undefined>>,
  signal: AbortSignal,
): Promise<SmiReading> {
  const binary = Bun.which("nvidia-smi", { PATH: env.PATH ?? "" });
  if (!binary) return { problem: `nvidia-smi was not found on PATH (${env.PATH ?? "unset"})` };
  const cleanEnv: Record<string, string> = { LC_ALL: "C" };
  for (const [k, v] of Object.entries(env)) if (v !== undefined && k !== "LC_ALL") cleanEnv[k] = v;
  try {
    const { code, stdout, stderr } = await runWithTimeout(
      async (bound) => {
        const proc = Bun.spawn([binary, "-q", "-x"], {
          env: cleanEnv,
          stdin: "ignore",
          stdout: "pipe",
          stderr: "pipe",
        });
        bound.addEventListener("abort", () => proc.kill("SIGKILL"), { once: true });
        const [out, err, exit] = await Promise.all([
          new Response(proc.stdout).text(),
          new Response(proc.stderr).text(),
          proc.exited,
        ]);
        return { code: exit, stdout: out, stderr: err };
      },
      {
        ms: SMI_TIMEOUT_MS,
        onTimeout: () => new Error(`nvidia-smi did not finish within ${SMI_TIMEOUT_MS / 1000} s`),
        signal,
      },
    );
    if (code !== 0)
      return { problem: `nvidia-smi exited ${code}: ${stderr.trim().split("\n")[0] || "(no stderr)"}` };
    const gpus = smiGpuCount(stdout);
    return gpus === undefined ? { problem: "nvidia-smi -q -x printed no nvidia_smi_log document" } : { gpus };
  } catch (err) {
    if (signal.aborted) throw err;
    return { problem: err instanceof Error ? err.message : String(err) };
  }
}

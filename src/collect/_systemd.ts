import { findOnPath, runCommand } from "./_exec.ts";
import { type CollectorOptions, errorText, type Measurement, type Readings } from "./_types.ts";

export const SYSTEMD_UNITS = ["containerd.service", "docker.service", "kubelet.service"] as const;
const SHOW_TIMEOUT_MS = 10_000;
// Noise or sensitive: CPU/NUMA pinning masks, condition bookkeeping, attached BPF programs, bus names.
const DROPPED = new Set(["AllowedCPUs", "AllowedMemoryNodes", "Asserts", "BPFProgram", "BusName", "Id"]);

/**
 * `systemctl show` output → readings, values kept as the strings systemctl prints. Properties named
 * above and any containing "Credential" are dropped. Undefined when the unit is not loaded
 * (LoadState=not-found), so absent services are left out rather than reported empty.
 */
export function parseSystemctlShow(output: string): Readings | undefined {
  const out: Readings = {};
  for (const line of output.split("\n")) {
    const eq = line.indexOf("=");
    if (eq <= 0) continue;
    const key = line.slice(0, eq);
    if (DROPPED.has(key) || key.includes("Credential")) continue;
    out[key] = line.slice(eq + 1);
  }
  if (Object.keys(out).length === 0 || out.LoadState === "not-found") return undefined;
  return out;
}

async function showUnit(
  options: CollectorOptions,
  systemctl: string,
  unit: string,
): Promise<Readings | undefined> {
  const result = await runCommand(systemctl, ["show", "--no-pager", unit], {
    env: options.env,
    signal: options.signal,
    timeoutMs: SHOW_TIMEOUT_MS,
  });
  if (result.exitCode !== 0) {
    // "System has not been booted with systemd" and a missing /run/systemd both land here.
    options.log.debug("systemctl show failed", {
      unit,
      exitCode: result.exitCode,
      stderr: result.stderr.trim(),
    });
    return undefined;
  }
  return parseSystemctlShow(result.stdout);
}

/** SystemD: one subtype per loaded unit; no systemctl or no reachable systemd gives an empty measurement. */
export async function collectSystemd(options: CollectorOptions): Promise<Measurement> {
  const systemctl = await findOnPath("systemctl", options.env);
  if (!systemctl) {
    options.log.debug("systemctl not found on PATH; SystemD measurement is empty");
    return { type: "SystemD", subtypes: [] };
  }
  const results = await Promise.all(
    SYSTEMD_UNITS.map(async (unit) => {
      try {
        const data = await showUnit(options, systemctl, unit);
        return data && { subtype: unit, data };
      } catch (err) {
        if (options.signal.aborted) throw err;
        options.log.warn("systemctl show could not run; unit left out", { unit, cause: errorText(err) });
        return undefined;
      }
    }),
  );
  return { type: "SystemD", subtypes: results.filter((s) => s !== undefined) };
}

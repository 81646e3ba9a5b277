import { findOnPath, runCommand } from "./_exec.ts";
import type { CollectorOptions, Readings } from "./_types.ts";
import { parseXml, textAt } from "./_xml.ts";

export const SMI_TIMEOUT_MS = 10_000;

/** First-GPU readings and the nvidia-smi element each comes from (schema of `nvidia-smi -q -x`). */
const FIRST_GPU_FIELDS: readonly [string, string][] = [
  ["gpu.model", "product_name"],
  ["gpu.product-architecture", "product_architecture"],
  ["gpu.display-mode", "display_mode"],
  ["gpu.display-active", "display_active"],
  ["gpu.persistence-mode", "persistence_mode"],
  ["gpu.addressing-mode", "addressing_mode"],
  ["gpu.vbios-version", "vbios_version"],
  ["gpu.gsp-firmware-version", "gsp_firmware_version"],
];

/** What a node without a usable nvidia-smi reports. */
export const NO_SMI: Readings = { "gpu-count": 0 };

/**
 * Readings from `nvidia-smi -q -x` output. gpu-count is `attached_gpus` (what the driver enumerated),
 * falling back to the number of <gpu> elements. Elements an older driver does not print are left out.
 */
export function parseSmiXml(xml: string): Readings {
  const root = parseXml(xml);
  if (root.name !== "nvidia_smi_log") throw new Error(`unexpected root element <${root.name}>`);
  const gpus = root.children.filter((c) => c.name === "gpu");
  const attached = textAt(root, "attached_gpus");
  const out: Readings = {};
  const driver = textAt(root, "driver_version");
  const cuda = textAt(root, "cuda_version");
  if (driver) out.driver = driver;
  if (cuda) out["cuda-version"] = cuda;
  out["gpu-count"] = attached && /^\d+$/.test(attached) ? Number(attached) : gpus.length;
  const first = gpus[0];
  if (first) {
    for (const [key, element] of FIRST_GPU_FIELDS) {
      const value = textAt(first, element);
      if (value) out[key] = value;
    }
  }
  return out;
}

/** The `smi` subtype: never fails — a missing binary, a non-zero exit or unreadable XML gives gpu-count 0. */
export async function collectSmi(options: CollectorOptions): Promise<Readings> {
  const binary = await findOnPath("nvidia-smi", options.env);
  if (!binary) {
    options.log.debug("nvidia-smi not found on PATH; reporting no GPUs from smi");
    return { ...NO_SMI };
  }
  try {
    const result = await runCommand(binary, ["-q", "-x"], {
      env: options.env,
      signal: options.signal,
      timeoutMs: SMI_TIMEOUT_MS,
    });
    if (result.exitCode !== 0) {
      const stderr = result.stderr.trim().split("\n")[0] ?? "";
      options.log.warn("nvidia-smi failed; reporting no GPUs from smi", {
        exitCode: result.exitCode,
        stderr,
      });
      return { ...NO_SMI };
    }
    return parseSmiXml(result.stdout);
  } catch (err) {
    if (options.signal.aborted) throw err;
    const cause = err instanceof Error ? err.message : String(err);
    options.log.warn("nvidia-smi output unusable; reporting no GPUs from smi", { cause });
    return { ...NO_SMI };
  }
}

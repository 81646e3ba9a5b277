import { collectPciHardware } from "./_pci.ts";
import { collectSmi } from "./_smi.ts";
import type { CollectorOptions, Measurement } from "./_types.ts";

/** GPU: `smi` (driver view, always present) and `hardware` (PCI view, when sysfs is readable). */
export async function collectGpu(options: CollectorOptions): Promise<Measurement> {
  const [smi, hardware] = await Promise.all([collectSmi(options), collectPciHardware(options)]);
  const subtypes: Measurement["subtypes"] = [{ subtype: "smi", data: smi }];
  if (hardware) subtypes.push({ subtype: "hardware", data: hardware });
  return { type: "GPU", subtypes };
}

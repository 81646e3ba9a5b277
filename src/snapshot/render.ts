import { AicrError } from "../core/errors.ts";
import { mergeK8sSubtypes } from "./_providers.ts";
import { renderTable } from "./_table.ts";
import { renderTemplate, type Template } from "./_template.ts";
import type { Snapshot, Subtype } from "./schema.ts";
import { serializeSnapshot } from "./serialize.ts";

export {
  PROVIDER_KINDS,
  PROVIDER_SOURCES,
  type ProviderKind,
} from "./_providers.ts";
export type { Template } from "./_template.ts";

/**
 * How a collected snapshot is shown (pure). yaml and json read back with parseSnapshot; table (FIELD/VALUE
 * rows) and a --template rendering are for people and scripts, and never go to a cm:// ConfigMap.
 */
export type Presentation =
  | { kind: "yaml" }
  | { kind: "json" }
  | { kind: "table" }
  | { kind: "template"; template: Template };

export const PRESENTATION_FORMATS = ["yaml", "json", "table"] as const;

export function renderSnapshot(doc: Snapshot, how: Presentation): string {
  if (how.kind === "table") return renderTable(doc);
  if (how.kind === "template") return renderTemplate(how.template, doc);
  return serializeSnapshot(doc, how.kind);
}

/** The readings of the provider files, in the K8s measurement (created when absent). */
export function withProviderReadings(doc: Snapshot, subtypes: readonly Subtype[] | undefined): Snapshot {
  return subtypes && subtypes.length > 0 ? mergeK8sSubtypes(doc, subtypes) : doc;
}

/** The largest `gpu-count` any GPU subtype reports (0 when none does). */
export function gpuCount(doc: Snapshot): number {
  const gpu = doc.measurements.find((m) => m.type === "GPU");
  let most = 0;
  for (const s of gpu?.subtypes ?? []) {
    const n = Number(s.data["gpu-count"]);
    if (Number.isFinite(n) && n > most) most = n;
  }
  return most;
}

/**
 * --require-gpu after collection: NOT_FOUND naming the node when no GPU subtype counts a GPU.
 * `writtenTo`: where the agent already wrote the document (a cm:// target), said instead of "not delivered".
 */
export function assertGpuFound(doc: Snapshot, writtenTo?: string): void {
  if (gpuCount(doc) > 0) return;
  const node = doc.metadata["source-node"];
  const fate = writtenTo ? `the agent had already written ${writtenTo}` : "the snapshot was not delivered";
  throw new AicrError(
    "NOT_FOUND",
    `--require-gpu: node ${JSON.stringify(node)} reports no GPU (no GPU subtype has gpu-count > 0); ${fate}`,
    {
      remedy:
        "run on a GPU node (--node-selector nvidia.com/gpu.present=true), check the NVIDIA driver and device plugin there, or drop --require-gpu",
      context: { field: "--require-gpu", node },
    },
  );
}

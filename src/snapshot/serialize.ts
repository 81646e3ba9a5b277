import { Document, isScalar, visit } from "yaml";
import type { Snapshot } from "./schema.ts";

export type SnapshotFormat = "yaml" | "json";

export const SNAPSHOT_FORMATS: readonly SnapshotFormat[] = ["yaml", "json"];

// YAML 1.1 readers (Go's sigs.k8s.io/yaml among them) read these plain scalars as booleans or null,
// although YAML 1.2 keeps them strings; quote them so every reader gets the string back.
const YAML11_WORDS = /^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|=)$/;
// Anything that starts like a number (versions, dates, sexagesimals, hex) is quoted for the same reason.
const NUMBER_LIKE = /^[-+]?\.?[0-9]/;

function needsQuotes(value: string): boolean {
  return YAML11_WORDS.test(value) || NUMBER_LIKE.test(value);
}

function toYaml(doc: Snapshot): string {
  // Identical subtrees must be written out, never as anchors and aliases.
  const yamlDoc = new Document(doc, { aliasDuplicateObjects: false });
  visit(yamlDoc, {
    Scalar(_key, node) {
      if (isScalar(node) && typeof node.value === "string" && needsQuotes(node.value)) {
        node.type = "QUOTE_DOUBLE";
      }
    },
  });
  return yamlDoc.toString({ lineWidth: 0 });
}

/** The bytes written to stdout, a file or a ConfigMap; parseSnapshot reads either form back unchanged. */
export function serializeSnapshot(doc: Snapshot, format: SnapshotFormat): string {
  return format === "json" ? `${JSON.stringify(doc, null, 2)}\n` : toYaml(doc);
}

import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import { envelopeMissingMessage, parseSnapshot, type Snapshot } from "../snapshot/schema.ts";
import {
  type DocumentSource,
  describeSource,
  parseSource,
  readSourceConfigMap,
  readSourceFile,
} from "../snapshot/source.ts";

export type DiffSource = DocumentSource;

export interface LoadedSnapshot {
  /** How the source is named: the path or the cm:// URI. */
  name: string;
  snapshot: Snapshot;
}

/** --baseline/--target: a file path or cm://<namespace>/<name>; checked before anything is read. */
export function parseDiffSource(flag: string, value: string | undefined): DiffSource {
  if (value === undefined || value === "") {
    throw new AicrError(
      "INVALID_REQUEST",
      `${flag} is required: a snapshot file or cm://<namespace>/<name>`,
      {
        remedy: `pass ${flag} <snapshot.yaml> (written by aicr snapshot) or ${flag} cm://<namespace>/<name>`,
        context: { field: flag, value: value ?? "" },
      },
    );
  }
  return parseSource(value);
}

export const sourceName = describeSource;

const parse = (text: string, name: string, log: Logger): Snapshot =>
  parseSnapshot(text, name, { onEnvelopeMissing: (source) => log.warn(envelopeMissingMessage(source)) });

/**
 * Both sides read: every file first (a bad file is exit 2 before any request), then the ConfigMaps
 * through one connection; `connect` is called only when a side is cm://.
 */
export async function loadBoth(
  sides: readonly [{ flag: string; source: DiffSource }, { flag: string; source: DiffSource }],
  connect: () => Promise<KubeClient>,
  log: Logger,
): Promise<[LoadedSnapshot, LoadedSnapshot]> {
  const out: (LoadedSnapshot | undefined)[] = [undefined, undefined];
  for (const [i, { flag, source }] of sides.entries()) {
    if (source.kind === "file") {
      const file = await readSourceFile(flag, source.path, "snapshot");
      out[i] = { name: file.name, snapshot: parse(file.text, file.name, log) };
    }
  }
  for (const [i, { flag, source }] of sides.entries()) {
    if (source.kind === "configmap") {
      const cm = await readSourceConfigMap(flag, source.ref, "snapshot", await connect());
      out[i] = { name: cm.name, snapshot: parse(cm.text, cm.name, log) };
    }
  }
  const [a, b] = out;
  if (!a || !b) throw new Error("both sides are read");
  return [a, b];
}

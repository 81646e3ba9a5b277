import { readFile } from "node:fs/promises";
import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import { isNotFound } from "../kube/errors.ts";
import { type ConfigMapRef, isConfigMapUri, parseConfigMapUri } from "../snapshot/cm-uri.ts";
import { envelopeMissingMessage, parseSnapshot, type Snapshot } from "../snapshot/schema.ts";

export type DiffSource = { kind: "file"; path: string } | { kind: "configmap"; ref: ConfigMapRef };

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
  return isConfigMapUri(value)
    ? { kind: "configmap", ref: parseConfigMapUri(value) }
    : { kind: "file", path: value };
}

export const sourceName = (s: DiffSource): string =>
  s.kind === "file" ? s.path : `cm://${s.ref.namespace}/${s.ref.name}`;

const parse = (text: string, name: string, log: Logger): Snapshot =>
  parseSnapshot(text, name, { onEnvelopeMissing: (source) => log.warn(envelopeMissingMessage(source)) });

async function readSnapshotFile(flag: string, path: string, log: Logger): Promise<LoadedSnapshot> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (err as Error).message;
    throw new AicrError("INVALID_REQUEST", `cannot read ${flag} ${JSON.stringify(path)}: ${why}`, {
      remedy: "pass the path of a snapshot file written by aicr snapshot",
      context: { field: flag, value: path },
    });
  }
  return { name: path, snapshot: parse(text, path, log) };
}

/** The ConfigMap key holding the snapshot: snapshot.yaml, snapshot.json, else its only key. */
function pickKey(data: Record<string, string>): string | undefined {
  for (const key of ["snapshot.yaml", "snapshot.json"]) if (key in data) return key;
  const keys = Object.keys(data);
  return keys.length === 1 ? keys[0] : undefined;
}

async function readSnapshotConfigMap(
  flag: string,
  ref: ConfigMapRef,
  client: KubeClient,
  log: Logger,
): Promise<LoadedSnapshot> {
  const name = `cm://${ref.namespace}/${ref.name}`;
  const cm = await client
    .get<{ data?: Record<string, string> }>({ apiVersion: "v1", kind: "ConfigMap", ...ref })
    .catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
      throw new AicrError(
        "NOT_FOUND",
        `${flag} ${name}: ConfigMap ${ref.name} not found in namespace ${ref.namespace}`,
        {
          remedy: `check the name and namespace (kubectl get configmaps -n ${ref.namespace}), or pass ${flag} <file>`,
          context: { field: flag, value: name },
        },
      );
    });
  const data = cm.data ?? {};
  const key = pickKey(data);
  if (!key) {
    throw new AicrError(
      "INVALID_REQUEST",
      `${flag} ${name} holds no snapshot: expected the key snapshot.yaml (keys: ${Object.keys(data).join(", ") || "none"})`,
      {
        remedy: "point at a ConfigMap written by aicr snapshot -o cm://…",
        context: { field: flag, value: name },
      },
    );
  }
  return { name, snapshot: parse(data[key] ?? "", name, log) };
}

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
    if (source.kind === "file") out[i] = await readSnapshotFile(flag, source.path, log);
  }
  for (const [i, { flag, source }] of sides.entries()) {
    if (source.kind === "configmap")
      out[i] = await readSnapshotConfigMap(flag, source.ref, await connect(), log);
  }
  const [a, b] = out;
  if (!a || !b) throw new Error("both sides are read");
  return [a, b];
}

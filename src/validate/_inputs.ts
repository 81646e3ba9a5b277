import { readFile } from "node:fs/promises";
import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import { isNotFound } from "../kube/errors.ts";
import { envelopeMissingMessage, parseSnapshot, type Snapshot } from "../snapshot/schema.ts";
import type { Source } from "./options.ts";

export interface LoadedText {
  text: string;
  /** How the source is named in messages: the path or the cm:// URI. */
  name: string;
}

export const describeSource = (s: Source): string =>
  s.kind === "file" ? s.path : `cm://${s.ref.namespace}/${s.ref.name}`;

/** The ConfigMap key holding the document: `<what>.yaml`, `<what>.json`, else its only key. */
export function pickDataKey(data: Record<string, string>, what: string): string | undefined {
  for (const key of [`${what}.yaml`, `${what}.json`]) if (key in data) return key;
  const keys = Object.keys(data);
  return keys.length === 1 ? keys[0] : undefined;
}

/** Reads a recipe or snapshot from a file or a ConfigMap; the cluster is contacted only for cm://. */
export async function loadSource(
  source: Source,
  what: "recipe" | "snapshot",
  connect: () => Promise<KubeClient>,
): Promise<LoadedText> {
  const name = describeSource(source);
  const flag = `--${what}`;
  if (source.kind === "file") {
    try {
      return { text: await readFile(source.path, "utf8"), name };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new AicrError(
        "INVALID_REQUEST",
        `cannot read ${flag} ${JSON.stringify(source.path)}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (err as Error).message}`,
        { remedy: `pass the path of a ${what} file`, context: { field: flag, value: source.path } },
      );
    }
  }
  const client = await connect();
  const cm = await client
    .get<{ data?: Record<string, string> }>({ apiVersion: "v1", kind: "ConfigMap", ...source.ref })
    .catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
      throw new AicrError(
        "NOT_FOUND",
        `${flag} ${name}: ConfigMap ${source.ref.name} not found in namespace ${source.ref.namespace}`,
        {
          remedy: `check the name and namespace (kubectl get configmaps -n ${source.ref.namespace}), or pass ${flag} <file>`,
          context: { field: flag, value: name },
        },
      );
    });
  const data = cm.data ?? {};
  const key = pickDataKey(data, what);
  if (!key) {
    throw new AicrError(
      "INVALID_REQUEST",
      `${flag} ${name} holds no ${what} document: expected the key ${what}.yaml (keys: ${Object.keys(data).join(", ") || "none"})`,
      { remedy: `store the ${what} under the key ${what}.yaml`, context: { field: flag, value: name } },
    );
  }
  return { text: data[key] ?? "", name };
}

/**
 * Parses a snapshot the user handed in (or a live capture's text); a document without an envelope
 * (the original's measurements-only form) is read, with one WARN saying so.
 */
export function parseSnapshotWarning(text: string, name: string, log: Logger): Snapshot {
  return parseSnapshot(text, name, {
    onEnvelopeMissing: (source) => log.warn(envelopeMissingMessage(source)),
  });
}

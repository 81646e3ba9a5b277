import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import { envelopeMissingMessage, parseSnapshot, type Snapshot } from "../snapshot/schema.ts";
import { type LoadedText, loadSource as loadDocument } from "../snapshot/source.ts";
import { type Source, VALIDATE_COMMAND } from "./options.ts";

export { describeSource, type LoadedText, pickDataKey } from "../snapshot/source.ts";

/**
 * Reads a recipe or snapshot from a file, a ConfigMap or an https:// URL (verified with `fetch.ca`,
 * bounded, cancelled with `fetch.signal`); the cluster is contacted only for cm://.
 */
export const loadSource = (
  source: Source,
  what: "recipe" | "snapshot",
  connect: () => Promise<KubeClient>,
  fetch: { ca?: string | undefined; signal: AbortSignal },
): Promise<LoadedText> =>
  loadDocument(source, { flag: `--${what}`, what, fetch: { ...fetch, command: VALIDATE_COMMAND } }, connect);

/**
 * Parses a snapshot the user handed in (or a live capture's text); a document without an envelope
 * (the original's measurements-only form) is read, with one WARN saying so.
 */
export function parseSnapshotWarning(text: string, name: string, log: Logger): Snapshot {
  return parseSnapshot(text, name, {
    onEnvelopeMissing: (source) => log.warn(envelopeMissingMessage(source)),
  });
}

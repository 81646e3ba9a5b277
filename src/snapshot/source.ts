/**
 * A document the operator names with a flag — a snapshot or a recipe — read from a file, from a
 * ConfigMap (`cm://<namespace>/<name>`) or, where the caller takes URLs (validate), from an https://
 * URL (_https-source.ts). validate and diff read their inputs here; the cluster is contacted only for
 * cm://.
 */
import { AicrError } from "../core/errors.ts";
import { INPUT_LIMITS, readInputText } from "../core/input-file.ts";
import { maskUrl } from "../core/url.ts";
import type { KubeClient } from "../kube/client.ts";
import { isNotFound } from "../kube/errors.ts";
import { fetchHttpsText, looksLikeUrl, parseHttpsUrl } from "./_https-source.ts";
import { type ConfigMapRef, isConfigMapUri, parseConfigMapUri } from "./cm-uri.ts";

export type DocumentSource =
  | { kind: "file"; path: string }
  | { kind: "configmap"; ref: ConfigMapRef }
  | { kind: "url"; url: URL };

/** Where URLs are taken: the flag and document they name, and the command (for the remedies). */
export interface UrlSpec {
  flag: string;
  what: string;
  command: string;
}

/** What an https:// fetch needs at run time: the --ca-file CA, the run's cancel signal. */
export interface FetchOptions {
  ca?: string | undefined;
  signal: AbortSignal;
  command: string;
}

export interface LoadedText {
  text: string;
  /** How the source is named in messages: the path, the cm:// URI or the URL (masked). */
  name: string;
}

/**
 * A flag's value as a source: cm://<namespace>/<name>; with `urls`, an https:// URL (checked now:
 * http:// and other schemes refused); else a file path.
 */
export function parseSource(value: string, urls?: UrlSpec): DocumentSource {
  if (isConfigMapUri(value)) return { kind: "configmap", ref: parseConfigMapUri(value) };
  if (urls && looksLikeUrl(value)) return { kind: "url", url: parseHttpsUrl(value, urls) };
  return { kind: "file", path: value };
}

export const describeSource = (s: DocumentSource): string =>
  s.kind === "file" ? s.path : s.kind === "url" ? maskUrl(s.url) : `cm://${s.ref.namespace}/${s.ref.name}`;

/** The ConfigMap key holding the document: `<what>.yaml`, `<what>.json`, else its only key. */
export function pickDataKey(data: Record<string, string>, what: string): string | undefined {
  for (const key of [`${what}.yaml`, `${what}.json`]) if (key in data) return key;
  const keys = Object.keys(data);
  return keys.length === 1 ? keys[0] : undefined;
}

/** The cap of a document read from a file, by what it is. */
const SOURCE_LIMITS: Record<string, number> = {
  recipe: INPUT_LIMITS.recipe,
  snapshot: INPUT_LIMITS.snapshot,
};

/**
 * A file's text through the one bounded reader: a regular UTF-8 file within its kind's cap; anything
 * else is INVALID_REQUEST naming the flag.
 */
export async function readSourceFile(flag: string, path: string, what: string): Promise<LoadedText> {
  const maxBytes = SOURCE_LIMITS[what] ?? INPUT_LIMITS.snapshot;
  const text = readInputText(path, {
    flag,
    what: `a ${what} file`,
    maxBytes,
    remedy: `pass the path of a ${what} file (YAML or JSON, at most ${maxBytes / (1024 * 1024)} MiB), or cm://<namespace>/<name>`,
  });
  return { text, name: path };
}

/** A ConfigMap's document: NOT_FOUND when it does not exist, INVALID_REQUEST when no key holds one. */
export async function readSourceConfigMap(
  flag: string,
  ref: ConfigMapRef,
  what: string,
  client: KubeClient,
): Promise<LoadedText> {
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

/** An https:// URL's document, within its kind's cap (as a file's). */
export async function fetchSource(
  flag: string,
  url: URL,
  what: string,
  o: FetchOptions,
): Promise<LoadedText> {
  const maxBytes = SOURCE_LIMITS[what] ?? INPUT_LIMITS.snapshot;
  const text = await fetchHttpsText(url, { flag, what, maxBytes, ...o });
  return { text, name: maskUrl(url) };
}

/** A file, a ConfigMap or a URL; `connect` is called only for cm://, `fetch` is needed for a URL. */
export function loadSource(
  source: DocumentSource,
  o: { flag: string; what: string; fetch?: FetchOptions | undefined },
  connect: () => Promise<KubeClient>,
): Promise<LoadedText> {
  switch (source.kind) {
    case "file":
      return readSourceFile(o.flag, source.path, o.what);
    case "url":
      if (!o.fetch) throw new Error(`${o.flag}: a URL source needs the fetch options`);
      return fetchSource(o.flag, source.url, o.what, o.fetch);
    case "configmap":
      return connect().then((client) => readSourceConfigMap(o.flag, source.ref, o.what, client));
  }
}

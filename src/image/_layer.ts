/**
 * Image layers from tar entries, byte for byte reproducible: entries in tree order (parents before
 * children, siblings by name), every parent directory emitted explicitly with a fixed mode, one
 * mtime, one gzip level and a gzip header with no timestamp. Pure (Bun's zlib, no I/O).
 */
import { MEDIA, sha256Digest } from "./_oci.ts";
import { type TarEntry, writeTar } from "./_tar.ts";

export interface Layer {
  mediaType: string;
  /** The gzip-compressed tar: the blob a registry stores. */
  blob: Uint8Array;
  digest: string;
  /** sha256 of the uncompressed tar (the config's rootfs.diff_ids). */
  diffId: string;
  size: number;
}

export class LayerError extends Error {
  override readonly name = "LayerError";
}

/**
 * One level everywhere: a different level (or zlib build) gives different bytes and digests. 6 (gzip's
 * default): level 9 makes the binary's layer 2.4% smaller in 2.6 times the time (6.0 s against 2.3 s).
 */
export const GZIP_LEVEL = 6;
const PARENT_MODE = 0o755;

function components(path: string): string[] {
  const parts = path.replace(/\/$/, "").split("/");
  if (path.startsWith("/") || parts.some((p) => p === "" || p === "." || p === ".."))
    throw new LayerError(`layer path must be relative and normalised: ${JSON.stringify(path)}`);
  return parts;
}

/** Tree order: compare component by component, so a directory's entries follow it directly. */
function compare(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/**
 * Normalises entries for a tar: validates paths, adds every missing parent directory (mode 0755),
 * refuses duplicates, sorts in tree order, and writes directories with a trailing slash.
 */
export function treeEntries(entries: readonly TarEntry[]): TarEntry[] {
  const byPath = new Map<string, { parts: string[]; entry: TarEntry }>();
  for (const entry of entries) {
    const parts = components(entry.path);
    const key = parts.join("/");
    if (byPath.has(key)) throw new LayerError(`duplicate layer path: ${key}`);
    byPath.set(key, { parts, entry });
  }
  for (const { parts } of [...byPath.values()]) {
    for (let n = 1; n < parts.length; n++) {
      const key = parts.slice(0, n).join("/");
      const parent = byPath.get(key);
      if (parent && parent.entry.type !== "dir")
        throw new LayerError(`${key} is a ${parent.entry.type} but holds ${parts.join("/")}`);
      if (!parent)
        byPath.set(key, { parts: parts.slice(0, n), entry: { type: "dir", path: key, mode: PARENT_MODE } });
    }
  }
  return [...byPath.values()]
    .sort((a, b) => compare(a.parts, b.parts))
    .map(({ parts, entry }) => {
      const path = parts.join("/");
      return entry.type === "dir" ? { ...entry, path: `${path}/` } : { ...entry, path };
    });
}

/**
 * gzip with a fixed header: zlib already writes mtime 0 and no name, but the OS byte is the build
 * host's (3 on Linux, 19 on macOS), so it is set to 255 ("unknown") as Go's gzip writer does.
 */
export function gzipFixed(data: Uint8Array): Uint8Array {
  const out = Bun.gzipSync(data as Uint8Array<ArrayBuffer>, { level: GZIP_LEVEL });
  if (out[0] !== 0x1f || out[1] !== 0x8b || out[3] !== 0)
    throw new LayerError("unexpected gzip header from zlib (flags set)");
  out.fill(0, 4, 8);
  out[9] = 0xff;
  return out;
}

/** A gzip layer of the entries (normalised by treeEntries), all with mtime 0. */
export function buildLayer(entries: readonly TarEntry[]): Layer {
  const tar = writeTar(treeEntries(entries), { mtime: 0 });
  return layerOf(gzipFixed(tar), tar);
}

const layerOf = (blob: Uint8Array, tar: Uint8Array): Layer => ({
  mediaType: MEDIA.layerGzip,
  blob,
  digest: sha256Digest(blob),
  diffId: sha256Digest(tar),
  size: blob.length,
});

/** gunzip of any Uint8Array view (Bun's types want one over a plain ArrayBuffer). */
export const gunzip = (data: Uint8Array): Uint8Array => Bun.gunzipSync(data as Uint8Array<ArrayBuffer>);

/** A layer from an already compressed blob (one the binary carries); its diff ID is recomputed. */
export function layerFromBlob(blob: Uint8Array): Layer {
  let tar: Uint8Array;
  try {
    tar = gunzip(blob);
  } catch (e) {
    throw new LayerError(`layer blob is not gzip: ${(e as Error).message}`);
  }
  return layerOf(blob, tar);
}

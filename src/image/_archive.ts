/**
 * Reads an OCI archive (a tar of an OCI image layout) into memory and checks it: the layout marker,
 * index.json, and for every manifest reachable from it, the manifest, config and layer blobs with
 * their digests and sizes. Pure over the archive's bytes.
 */
import {
  type Descriptor,
  type Index,
  isIndexMedia,
  isManifestMedia,
  type Manifest,
  sha256Digest,
} from "./_oci.ts";
import { readTar } from "./_tar.ts";

export interface OciArchive {
  index: Index;
  /** The blob's bytes (already checked against its digest), or undefined if the archive lacks it. */
  blob(digest: string): Uint8Array | undefined;
  /** Every image manifest reachable from index.json, with the descriptor that points at it. */
  images: { descriptor: Descriptor; manifest: Manifest }[];
}

export class ArchiveError extends Error {
  override readonly name = "ArchiveError";
}

const json = <T>(bytes: Uint8Array, what: string): T => {
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as T;
  } catch {
    // no detail: the parser's message quotes the text it stopped at
    throw new ArchiveError(`${what} is not valid JSON`);
  }
};

export function readOciArchive(bytes: Uint8Array): OciArchive {
  const files = new Map<string, Uint8Array>();
  for (const m of readTar(bytes)) if (m.type === "file") files.set(m.path.replace(/^\.\//, ""), m.data);
  const layout = files.get("oci-layout");
  if (!layout) throw new ArchiveError("no oci-layout file: not an OCI image layout archive");
  const version = json<{ imageLayoutVersion?: string }>(layout, "oci-layout").imageLayoutVersion;
  if (version !== "1.0.0")
    throw new ArchiveError(`unsupported imageLayoutVersion ${JSON.stringify(version)}`);
  const indexBytes = files.get("index.json");
  if (!indexBytes) throw new ArchiveError("no index.json in the archive");
  const index = json<Index>(indexBytes, "index.json");

  const checked = new Map<string, Uint8Array>();
  const blob = (d: Descriptor, what: string): Uint8Array => {
    const hit = checked.get(d.digest);
    if (hit) return hit;
    const [algo, hex] = d.digest.split(":");
    const data = files.get(`blobs/${algo}/${hex}`);
    if (!data) throw new ArchiveError(`${what} ${d.digest} is missing from the archive`);
    if (data.length !== d.size)
      throw new ArchiveError(`${what} ${d.digest} has ${data.length} bytes, its descriptor says ${d.size}`);
    const actual = sha256Digest(data);
    if (actual !== d.digest) throw new ArchiveError(`${what} ${d.digest} has digest ${actual}`);
    checked.set(d.digest, data);
    return data;
  };

  const images: OciArchive["images"] = [];
  const visit = (d: Descriptor, depth: number): void => {
    if (depth > 4) throw new ArchiveError("index nesting deeper than 4");
    if (isIndexMedia(d.mediaType)) {
      const child = json<Index>(blob(d, "index"), `index ${d.digest}`);
      for (const m of child.manifests ?? []) visit(m, depth + 1);
    } else if (isManifestMedia(d.mediaType)) {
      const manifest = json<Manifest>(blob(d, "manifest"), `manifest ${d.digest}`);
      blob(manifest.config, "config");
      for (const l of manifest.layers ?? []) blob(l, "layer");
      images.push({ descriptor: d, manifest });
    }
    // other artifacts (signatures, attestations) are carried along but not interpreted
  };
  for (const d of index.manifests ?? []) visit(d, 0);
  if (images.length === 0) throw new ArchiveError("index.json points at no image manifest");

  return { index, images, blob: (digest) => checked.get(digest) };
}

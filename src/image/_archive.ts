/**
 * Reads an OCI archive (a tar of an OCI image layout) into memory and checks it: the layout marker,
 * index.json, and for every manifest reachable from it, the manifest, config and layer blobs with
 * their digests and sizes. index.json names images (the roots, tagged) and referrers (OCI 1.1
 * manifests with a `subject`: SBOMs, provenance, signatures); each referrer is checked like an image
 * and its subject must be in the archive. Pure over the archive's bytes.
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

export interface Referrer {
  /** The entry of index.json that names it (with its artifactType and annotations). */
  descriptor: Descriptor;
  manifest: Manifest;
}

export interface OciArchive {
  index: Index;
  /** The blob's bytes (already checked against its digest), or undefined if the archive lacks it. */
  blob(digest: string): Uint8Array | undefined;
  /** The entries of index.json that are images (an index or a manifest), not referrers, in its order. */
  roots: Descriptor[];
  /** Every manifest and index reachable from the roots, each before its children, in index order. */
  manifests: Descriptor[];
  /** Every image manifest reachable from the roots, with the descriptor that points at it. */
  images: { descriptor: Descriptor; manifest: Manifest }[];
  /** The referrers index.json names, in its order. */
  referrers: Referrer[];
  /** The referrers whose subject is `digest`, in index.json's order. */
  referrersOf(digest: string): Referrer[];
}

/**
 * An archive that is not what it should be. `format`: not an OCI layout tar (the wrong file, a
 * truncated copy); `integrity`: a layout whose content is not what its descriptors name (a blob
 * missing, resized or altered, a referrer of something absent) — what tampering looks like.
 */
export class ArchiveError extends Error {
  override readonly name = "ArchiveError";
  constructor(
    message: string,
    readonly kind: "format" | "integrity" = "format",
  ) {
    super(message);
  }
}

const json = <T>(bytes: Uint8Array, what: string): T => {
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as T;
  } catch {
    // no detail: the parser's message quotes the text it stopped at
    throw new ArchiveError(`${what} is not valid JSON`);
  }
};

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Referrers in the layout's one order: by the position of their subject among `manifests` (the
 * layout's images, each before its children), then artifactType, then digest; a placed referrer
 * takes the next position, so a signature of an SBOM follows every referrer of the images.
 * Duplicates (same digest) are kept once. A subject found nowhere is an ArchiveError.
 */
export function orderReferrers<T extends { descriptor: Descriptor; subject: string }>(
  manifests: readonly string[],
  referrers: readonly T[],
): T[] {
  const position = new Map<string, number>();
  for (const digest of manifests) if (!position.has(digest)) position.set(digest, position.size);
  let pending = [...new Map(referrers.map((r) => [r.descriptor.digest, r])).values()].filter(
    (r) => !position.has(r.descriptor.digest),
  );
  const out: T[] = [];
  while (pending.length > 0) {
    const ready = pending.filter((r) => position.has(r.subject));
    if (ready.length === 0) {
      const r = pending[0]!;
      throw new ArchiveError(
        `referrer ${r.descriptor.digest} describes ${r.subject}, which is not in the layout`,
        "integrity",
      );
    }
    ready.sort(
      (a, b) =>
        position.get(a.subject)! - position.get(b.subject)! ||
        compare(a.descriptor.artifactType ?? "", b.descriptor.artifactType ?? "") ||
        compare(a.descriptor.digest, b.descriptor.digest),
    );
    for (const r of ready) {
      position.set(r.descriptor.digest, position.size);
      out.push(r);
    }
    pending = pending.filter((r) => !position.has(r.descriptor.digest));
  }
  return out;
}

export function readOciArchive(bytes: Uint8Array): OciArchive {
  const files = new Map<string, Uint8Array>();
  let members: ReturnType<typeof readTar>;
  try {
    members = readTar(bytes);
  } catch (err) {
    throw new ArchiveError(`not a tar archive: ${(err as Error).message}`);
  }
  for (const m of members) if (m.type === "file") files.set(m.path.replace(/^\.\//, ""), m.data);
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
    const [algo, hex] = String(d.digest).split(":");
    const data = files.get(`blobs/${algo}/${hex}`);
    if (!data) throw new ArchiveError(`${what} ${d.digest} is missing from the archive`, "integrity");
    if (data.length !== d.size)
      throw new ArchiveError(
        `${what} ${d.digest} has ${data.length} bytes, its descriptor says ${d.size}`,
        "integrity",
      );
    const actual = sha256Digest(data);
    if (actual !== d.digest) throw new ArchiveError(`${what} ${d.digest} has digest ${actual}`, "integrity");
    checked.set(d.digest, data);
    return data;
  };
  /** A manifest with its config and layers checked. */
  const manifestAt = (d: Descriptor, what: string): Manifest => {
    const manifest = json<Manifest>(blob(d, what), `${what} ${d.digest}`);
    blob(manifest.config, "config");
    for (const l of manifest.layers ?? []) blob(l, "layer");
    return manifest;
  };

  const roots: Descriptor[] = [];
  const referrers: Referrer[] = [];
  for (const d of index.manifests ?? []) {
    if (isManifestMedia(d.mediaType)) {
      const manifest = manifestAt(d, "manifest");
      if (manifest.subject) {
        referrers.push({ descriptor: d, manifest });
        continue;
      }
    }
    roots.push(d);
  }

  const manifests: Descriptor[] = [];
  const images: OciArchive["images"] = [];
  const visit = (d: Descriptor, depth: number): void => {
    if (depth > 4) throw new ArchiveError("index nesting deeper than 4");
    if (isIndexMedia(d.mediaType)) {
      manifests.push(d);
      const child = json<Index>(blob(d, "index"), `index ${d.digest}`);
      for (const m of child.manifests ?? []) visit(m, depth + 1);
    } else if (isManifestMedia(d.mediaType)) {
      manifests.push(d);
      images.push({ descriptor: d, manifest: manifestAt(d, "manifest") });
    }
    // other media types are carried along but not interpreted
  };
  for (const d of roots) visit(d, 0);
  if (images.length === 0) throw new ArchiveError("index.json points at no image manifest");
  orderReferrers(
    manifests.map((m) => m.digest),
    referrers.map((r) => ({ descriptor: r.descriptor, subject: String(r.manifest.subject?.digest) })),
  );

  return {
    index,
    roots,
    manifests,
    images,
    referrers,
    referrersOf: (digest) => referrers.filter((r) => r.manifest.subject?.digest === digest),
    blob: (digest) => checked.get(digest),
  };
}

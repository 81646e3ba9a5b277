/**
 * OCI images and image layouts from layers, byte for byte reproducible: JSON with keys in a fixed
 * order (labels and annotations sorted), a fixed creation time, and one deterministic tar for the
 * archive. A layout also carries referrers (SBOMs, provenance, signatures: OCI 1.1 manifests with a
 * `subject`), listed untagged after the tagged root in index.json. Pure: layers in, blobs and files out.
 */

import { orderReferrers, readOciArchive } from "./_archive.ts";
import type { Layer } from "./_layer.ts";
import { treeEntries } from "./_layer.ts";
import {
  blobPath,
  canonicalJson,
  type Descriptor,
  type ImageConfig,
  type Index,
  type Manifest,
  MEDIA,
  type Platform,
  sha256Digest,
} from "./_oci.ts";
import type { Artifact } from "./_referrers.ts";
import { readTar, type TarEntry, writeTar } from "./_tar.ts";

/** Every image says it was made at the epoch: a real timestamp would change the digest on every build. */
export const EPOCH = "1970-01-01T00:00:00Z";

export interface ImageSpec {
  platform: Platform;
  entrypoint: string[];
  env: string[];
  /** uid:gid the container runs as unless the pod says otherwise. */
  user: string;
  labels: Record<string, string>;
  /** Bottom layer first, each with the history line that says what it holds. */
  layers: { layer: Layer; createdBy: string }[];
  annotations: Record<string, string>;
}

export interface BuiltImage {
  platform: Platform;
  layers: Layer[];
  config: Uint8Array;
  configDigest: string;
  manifest: Uint8Array;
  /** The manifest's descriptor, with its platform (what an index lists). */
  descriptor: Descriptor;
}

const sorted = (record: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

export function imageConfig(spec: ImageSpec): ImageConfig {
  return {
    created: EPOCH,
    architecture: spec.platform.architecture,
    os: spec.platform.os,
    ...(spec.platform.variant ? { variant: spec.platform.variant } : {}),
    config: {
      User: spec.user,
      Env: spec.env,
      Entrypoint: spec.entrypoint,
      Labels: sorted(spec.labels),
    },
    rootfs: { type: "layers", diff_ids: spec.layers.map((l) => l.layer.diffId) },
    history: spec.layers.map((l) => ({ created: EPOCH, created_by: l.createdBy })),
  };
}

export function buildImage(spec: ImageSpec): BuiltImage {
  const config = canonicalJson(imageConfig(spec));
  const configDigest = sha256Digest(config);
  const layers = spec.layers.map((l) => l.layer);
  const body: Manifest = {
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config: { mediaType: MEDIA.config, digest: configDigest, size: config.length },
    layers: layers.map((l) => ({ mediaType: l.mediaType, digest: l.digest, size: l.size })),
    annotations: sorted(spec.annotations),
  };
  const manifest = canonicalJson(body);
  const descriptor: Descriptor = {
    mediaType: MEDIA.manifest,
    digest: sha256Digest(manifest),
    size: manifest.length,
    platform: spec.platform,
  };
  return { platform: spec.platform, layers, config, configDigest, manifest, descriptor };
}

export interface LayoutSpec {
  images: BuiltImage[];
  repository: string;
  tag: string;
  /** Annotations of the image index (multi-platform layouts only). */
  annotations: Record<string, string>;
  /** The one image `docker load` gets through manifest.json. */
  dockerImage: BuiltImage;
  /** Artifacts describing the index, a platform manifest or another referrer; any other subject is refused. */
  referrers?: readonly Artifact[] | undefined;
}

export interface Layout {
  /** oci-layout, index.json, manifest.json and the blobs, in tree order. */
  files: { path: string; data: Uint8Array }[];
  /** What the tag names: the image index for several platforms, else the one manifest. */
  digest: string;
}

/**
 * An OCI image layout plus Docker's manifest.json. Several platforms go behind one image index
 * (index.json names only it as an image, as buildx does, so tools that want one entry per tag get
 * one); a single platform is named directly. The referrers follow it in index.json, untagged, in
 * orderReferrers' order (throws ArchiveError for a referrer whose subject is not in the layout).
 */
export function buildLayout(spec: LayoutSpec): Layout {
  const blobs = new Map<string, Uint8Array>();
  const add = (data: Uint8Array): string => {
    const digest = sha256Digest(data);
    blobs.set(digest, data);
    return digest;
  };
  for (const image of spec.images) {
    add(image.config);
    add(image.manifest);
    for (const l of image.layers) blobs.set(l.digest, l.blob);
  }
  const refName = `${spec.repository}:${spec.tag}`;
  const refAnnotations = {
    "io.containerd.image.name": refName,
    "org.opencontainers.image.ref.name": spec.tag,
  };
  let top: Descriptor;
  if (spec.images.length === 1) {
    top = { ...spec.images[0]!.descriptor, annotations: refAnnotations };
  } else {
    const body: Index = {
      schemaVersion: 2,
      mediaType: MEDIA.index,
      manifests: spec.images.map((i) => i.descriptor),
      annotations: sorted(spec.annotations),
    };
    const index = canonicalJson(body);
    top = { mediaType: MEDIA.index, digest: add(index), size: index.length, annotations: refAnnotations };
  }
  const graph =
    spec.images.length === 1 ? [top.digest] : [top.digest, ...spec.images.map((i) => i.descriptor.digest)];
  const referrers = orderReferrers(
    graph,
    (spec.referrers ?? []).map((a) => ({ descriptor: a.descriptor, subject: a.subject.digest, artifact: a })),
  );
  for (const { artifact } of referrers) {
    add(artifact.manifest);
    for (const b of artifact.blobs) blobs.set(b.digest, b.data);
  }
  const indexJson: Index = {
    schemaVersion: 2,
    mediaType: MEDIA.index,
    manifests: [top, ...referrers.map((r) => r.descriptor)],
  };
  const docker = spec.dockerImage;
  // One entry only: two entries with the same RepoTags would collide in `docker load` (last one wins).
  const manifestJson = [
    {
      Config: blobPath(docker.configDigest),
      RepoTags: [refName],
      Layers: docker.layers.map((l) => blobPath(l.digest)),
    },
  ];
  const files = [
    { path: "oci-layout", data: canonicalJson({ imageLayoutVersion: "1.0.0" }) },
    { path: "index.json", data: canonicalJson(indexJson) },
    { path: "manifest.json", data: canonicalJson(manifestJson) },
    ...[...blobs].map(([digest, data]) => ({ path: blobPath(digest), data })),
  ];
  return { files: inTreeOrder(files), digest: top.digest };
}

function inTreeOrder(files: { path: string; data: Uint8Array }[]): Layout["files"] {
  const order = treeEntries(files.map((f) => ({ type: "file", path: f.path, mode: 0o644, data: f.data })));
  const byPath = new Map(files.map((f) => [f.path, f.data]));
  return order.flatMap((e) => (e.type === "file" ? [{ path: e.path, data: byPath.get(e.path)! }] : []));
}

/** The layout as one tar: entries in tree order, directories explicit, mtime 0. */
export function layoutArchive(layout: Pick<Layout, "files">): Uint8Array {
  const entries: TarEntry[] = layout.files.map((f) => ({
    type: "file",
    path: f.path,
    mode: 0o644,
    data: f.data,
  }));
  return writeTar(treeEntries(entries), { mtime: 0 });
}

/**
 * The archive with `artifacts` added as referrers: their blobs in blobs/, their descriptors in
 * index.json after the images, every referrer (old and new) in orderReferrers' order, so adding
 * referrers later gives the bytes buildLayout gives with all of them at once. One already listed is
 * skipped; with nothing new the archive comes back unchanged. The archive is checked first
 * (readOciArchive; ArchiveError), and a subject not in it is an ArchiveError too.
 */
export function appendReferrers(archive: Uint8Array, artifacts: readonly Artifact[]): Uint8Array {
  const oci = readOciArchive(archive);
  const listed = new Set(oci.referrers.map((r) => r.descriptor.digest));
  const fresh = artifacts.filter((a) => !listed.has(a.descriptor.digest));
  if (fresh.length === 0) return archive;
  const referrers = orderReferrers(
    oci.manifests.map((m) => m.digest),
    [
      ...oci.referrers.map((r) => ({
        descriptor: r.descriptor,
        subject: String(r.manifest.subject?.digest),
      })),
      ...fresh.map((a) => ({ descriptor: a.descriptor, subject: a.subject.digest })),
    ],
  );
  const files = new Map<string, Uint8Array>();
  for (const m of readTar(archive)) if (m.type === "file") files.set(m.path.replace(/^\.\//, ""), m.data);
  for (const a of fresh) {
    files.set(blobPath(a.descriptor.digest), a.manifest);
    for (const b of a.blobs) files.set(blobPath(b.digest), b.data);
  }
  const index: Index = { ...oci.index, manifests: [...oci.roots, ...referrers.map((r) => r.descriptor)] };
  files.set("index.json", canonicalJson(index));
  return layoutArchive({ files: [...files].map(([path, data]) => ({ path, data })) });
}

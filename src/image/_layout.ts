/**
 * OCI images and image layouts from layers, byte for byte reproducible: JSON with keys in a fixed
 * order (labels and annotations sorted), a fixed creation time, and one deterministic tar for the
 * archive. Pure: layers in, blobs and files out.
 */

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
import { type TarEntry, writeTar } from "./_tar.ts";

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
}

export interface Layout {
  /** oci-layout, index.json, manifest.json and the blobs, in tree order. */
  files: { path: string; data: Uint8Array }[];
  /** What the tag names: the image index for several platforms, else the one manifest. */
  digest: string;
}

/**
 * An OCI image layout plus Docker's manifest.json. Several platforms go behind one image index
 * (index.json names only it, as buildx does, so tools that want one entry per tag get one); a
 * single platform is named directly.
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
  const indexJson: Index = { schemaVersion: 2, mediaType: MEDIA.index, manifests: [top] };
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
  const order = treeEntries(files.map((f) => ({ type: "file", path: f.path, mode: 0o644, data: f.data })));
  const byPath = new Map(files.map((f) => [f.path, f.data]));
  return {
    files: order.flatMap((e) => (e.type === "file" ? [{ path: e.path, data: byPath.get(e.path)! }] : [])),
    digest: top.digest,
  };
}

/** The layout as one tar: entries in tree order, directories explicit, mtime 0. */
export function layoutArchive(layout: Layout): Uint8Array {
  const entries: TarEntry[] = layout.files.map((f) => ({
    type: "file",
    path: f.path,
    mode: 0o644,
    data: f.data,
  }));
  return writeTar(treeEntries(entries), { mtime: 0 });
}

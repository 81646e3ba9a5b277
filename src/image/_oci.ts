/**
 * The OCI image vocabulary aicr reads and writes: media types, descriptors, manifests, indexes and
 * the image config, plus content digests. Pure.
 */

export const MEDIA = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layerGzip: "application/vnd.oci.image.layer.v1.tar+gzip",
  layerTar: "application/vnd.oci.image.layer.v1.tar",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
  dockerList: "application/vnd.docker.distribution.manifest.list.v2+json",
} as const;

export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: Platform;
  /** OCI 1.1: what an artifact manifest holds (an SBOM, a signature), as an index lists it. */
  artifactType?: string;
  annotations?: Record<string, string>;
}

export interface Manifest {
  schemaVersion: 2;
  mediaType: string;
  artifactType?: string;
  config: Descriptor;
  layers: Descriptor[];
  /** OCI 1.1: the manifest this one describes (it is a referrer of that digest). */
  subject?: Descriptor;
  annotations?: Record<string, string>;
}

export interface Index {
  schemaVersion: 2;
  mediaType: string;
  manifests: Descriptor[];
  annotations?: Record<string, string>;
}

export interface ImageConfig {
  created?: string;
  architecture: string;
  os: string;
  variant?: string;
  config: {
    User?: string;
    Env?: string[];
    Entrypoint?: string[];
    Cmd?: string[];
    WorkingDir?: string;
    Labels?: Record<string, string>;
  };
  rootfs: { type: "layers"; diff_ids: string[] };
  history?: { created?: string; created_by?: string; comment?: string; empty_layer?: boolean }[];
}

/** `sha256:<hex>` of the bytes. */
export function sha256Digest(bytes: Uint8Array | string): string {
  return `sha256:${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}`;
}

const DIGEST = /^sha256:[a-f0-9]{64}$/;

export function isDigest(value: string): boolean {
  return DIGEST.test(value);
}

/** The path of a blob inside an OCI image layout. */
export function blobPath(digest: string): string {
  if (!isDigest(digest)) throw new Error(`not a sha256 digest: ${JSON.stringify(digest)}`);
  return `blobs/sha256/${digest.slice("sha256:".length)}`;
}

/** JSON as it is stored and hashed: no spaces, keys in the order given. */
export function canonicalJson(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}

export const isIndexMedia = (m: string): boolean => m === MEDIA.index || m === MEDIA.dockerList;
export const isManifestMedia = (m: string): boolean => m === MEDIA.manifest || m === MEDIA.dockerManifest;

/**
 * Small OCI archives for the push tests, made with the project's own tar writer and OCI vocabulary:
 * a two-platform index (nested behind index.json, as `aicr image build` and buildx write it) or a
 * single manifest named directly, optionally with referrers (an SBOM and a provenance statement of
 * each platform manifest, a signature of the root, of each platform manifest and of the first SBOM). Layer bytes are
 * random, so every archive's blobs are new to a registry unless a test pushes the same archive twice.
 */

import { appendReferrers } from "../../src/image/_layout.ts";
import {
  canonicalJson,
  type Descriptor,
  type Index,
  type Manifest,
  MEDIA,
  sha256Digest,
} from "../../src/image/_oci.ts";
import {
  ARTIFACT,
  type Artifact,
  buildArtifact,
  COSIGN_SIGNATURE_ANNOTATION,
  PREDICATE_TYPE_ANNOTATION,
  TITLE_ANNOTATION,
} from "../../src/image/_referrers.ts";
import { type TarEntry, writeTar } from "../../src/image/_tar.ts";

export interface TestArchive {
  bytes: Uint8Array;
  tag: string;
  /** What the tag names: the index (two platforms) or the manifest (one). */
  digest: string;
  rootMediaType: string;
  manifests: { digest: string; bytes: Uint8Array; mediaType: string }[];
  /** Layers and configs, digest → bytes (not the referrers'). */
  blobs: Map<string, Uint8Array>;
  /** The referrers in the archive (none unless asked). */
  referrers: Artifact[];
}

export interface ArchiveOptions {
  tag?: string;
  /** Uncompressed size of the layer that exceeds the test chunk size (default 300 KiB). */
  bigLayerBytes?: number;
  platforms?: 1 | 2;
  /** Add SBOMs, provenance and signatures as referrers. */
  referrers?: boolean;
}

const random = (n: number): Uint8Array => {
  const out = new Uint8Array(n);
  for (let at = 0; at < n; at += 65536) crypto.getRandomValues(out.subarray(at, Math.min(n, at + 65536)));
  return out;
};

function layer(path: string, size: number): { blob: Uint8Array; diffId: string } {
  const tar = writeTar([{ type: "file", path, mode: 0o644, data: random(size) }]);
  return { blob: Bun.gzipSync(tar as Uint8Array<ArrayBuffer>), diffId: sha256Digest(tar) };
}

export function buildTestArchive(o: ArchiveOptions = {}): TestArchive {
  const tag = o.tag ?? "v1";
  const blobs = new Map<string, Uint8Array>();
  const add = (bytes: Uint8Array): string => {
    const digest = sha256Digest(bytes);
    blobs.set(digest, bytes);
    return digest;
  };
  const shared = layer("shared.bin", 2048);
  const platforms = (o.platforms ?? 2) === 2 ? ["amd64", "arm64"] : ["amd64"];
  const manifests: TestArchive["manifests"] = [];
  const descriptors: Descriptor[] = platforms.map((arch, i) => {
    const own = layer(`${arch}.bin`, i === 0 ? (o.bigLayerBytes ?? 300 * 1024) : 4096);
    const layers = [shared, own];
    const config = canonicalJson({
      architecture: arch,
      os: "linux",
      config: {},
      rootfs: { type: "layers", diff_ids: layers.map((l) => l.diffId) },
    });
    const manifest: Manifest = {
      schemaVersion: 2,
      mediaType: MEDIA.manifest,
      config: { mediaType: MEDIA.config, digest: add(config), size: config.length },
      layers: layers.map((l) => ({ mediaType: MEDIA.layerGzip, digest: add(l.blob), size: l.blob.length })),
    };
    const bytes = canonicalJson(manifest);
    const digest = sha256Digest(bytes);
    manifests.push({ digest, bytes, mediaType: MEDIA.manifest });
    return {
      mediaType: MEDIA.manifest,
      digest,
      size: bytes.length,
      platform: { os: "linux", architecture: arch },
    };
  });
  const files = new Map<string, Uint8Array>();
  let top: Descriptor;
  if (descriptors.length === 1) {
    top = descriptors[0]!;
  } else {
    const index: Index = { schemaVersion: 2, mediaType: MEDIA.index, manifests: descriptors };
    const bytes = canonicalJson(index);
    top = { mediaType: MEDIA.index, digest: sha256Digest(bytes), size: bytes.length };
    manifests.push({ digest: top.digest, bytes, mediaType: MEDIA.index });
  }
  for (const m of manifests) files.set(m.digest, m.bytes);
  for (const [d, b] of blobs) files.set(d, b);
  const indexJson: Index = {
    schemaVersion: 2,
    mediaType: MEDIA.index,
    manifests: [{ ...top, annotations: { "org.opencontainers.image.ref.name": tag } }],
  };
  const entries: TarEntry[] = [
    { type: "file", path: "oci-layout", mode: 0o644, data: canonicalJson({ imageLayoutVersion: "1.0.0" }) },
    { type: "file", path: "index.json", mode: 0o644, data: canonicalJson(indexJson) },
    { type: "dir", path: "blobs/", mode: 0o755 },
    { type: "dir", path: "blobs/sha256/", mode: 0o755 },
    ...[...files].map(
      ([d, data]): TarEntry => ({ type: "file", path: `blobs/sha256/${d.slice(7)}`, mode: 0o644, data }),
    ),
  ];
  const referrers = o.referrers ? referrersFor(top, descriptors) : [];
  const bytes = writeTar(entries);
  return {
    bytes: referrers.length ? appendReferrers(bytes, referrers) : bytes,
    tag,
    digest: top.digest,
    rootMediaType: top.mediaType,
    manifests,
    blobs,
    referrers,
  };
}

const text = (value: string): Uint8Array => new TextEncoder().encode(value);

/** A signature referrer of `subject` (the signature bytes are random: nothing here verifies them). */
export function testSignature(subject: Descriptor): Artifact {
  const payload = {
    critical: {
      identity: { "docker-reference": "registry.example/test" },
      image: { "docker-manifest-digest": subject.digest },
      type: "cosign container image signature",
    },
    optional: null,
  };
  return buildArtifact({
    artifactType: ARTIFACT.cosignSignature,
    subject,
    layers: [
      {
        mediaType: ARTIFACT.simpleSigning,
        data: text(JSON.stringify(payload)),
        annotations: { [COSIGN_SIGNATURE_ANNOTATION]: Buffer.from(random(70)).toString("base64") },
      },
    ],
  });
}

function referrersFor(root: Descriptor, platforms: Descriptor[]): Artifact[] {
  const out = [testSignature(root)];
  for (const p of platforms) {
    const arch = p.platform?.architecture ?? "unknown";
    out.push(
      buildArtifact({
        artifactType: ARTIFACT.spdx,
        subject: p,
        layers: [
          {
            mediaType: ARTIFACT.spdx,
            data: text(
              `${JSON.stringify({ spdxVersion: "SPDX-2.3", name: `test-${arch}`, id: Math.random() })}\n`,
            ),
            annotations: { [TITLE_ANNOTATION]: `test-${arch}.spdx.json` },
          },
        ],
      }),
      buildArtifact({
        artifactType: ARTIFACT.intoto,
        subject: p,
        layers: [{ mediaType: ARTIFACT.intoto, data: text(`{"subject":"${p.digest}"}\n`) }],
        annotations: { [PREDICATE_TYPE_ANNOTATION]: "https://slsa.dev/provenance/v1" },
      }),
    );
    if (platforms.length > 1) out.push(testSignature(p));
  }
  // a referrer of a referrer, as aicr image sign writes them: the signature of the first SBOM
  out.push(testSignature(out[1]!.descriptor));
  return out;
}

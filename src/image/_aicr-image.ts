/**
 * The aicr image, defined once for both makers: `npm run image` (every platform, from the build's
 * binaries) and `aicr image save` (this binary, from the runtime layer and image info it carries).
 * The same binary, runtime layer and info give the same config and manifest, hence the same digest.
 * Pure.
 */
import { buildLayer, type Layer } from "./_layer.ts";
import { type BuiltImage, buildImage, buildLayout, type Layout } from "./_layout.ts";
import type { Artifact } from "./_referrers.ts";
import {
  type BuildFacts,
  checkDeb,
  checkFacts,
  type DebFacts,
  orderedDeb,
  orderedFacts,
} from "./attest/_facts.ts";

export type Arch = "amd64" | "arm64";
export const ARCHS: readonly Arch[] = ["amd64", "arm64"];

/** Where the binary sits in the image (the entrypoint, without the leading slash). */
export const BINARY_PATH = "usr/local/bin/aicr";

/** The names the carried files have in Bun.embeddedFiles. */
export const runtimeAssetName = (arch: Arch): string => `aicr-runtime-linux-${arch}.tar.gz`;
// not .json: Bun would bundle a .json entrypoint as a module instead of embedding the file
export const infoAssetName = (arch: Arch): string => `aicr-image-linux-${arch}.info`;

/** What a build knows about the image its binary belongs to; the binary carries it. */
export interface ImageInfo {
  arch: Arch;
  version: string;
  revision: string;
  repository: string;
  tag: string;
  /** Config labels besides version and revision: title, description, source, licenses, the runtime package. */
  labels: Record<string, string>;
  /** The runtime layer's history line (which package, which files). */
  runtimeHistory: string;
  /** The carried runtime layer's digest: a blob that does not match it is refused. */
  runtimeDigest: string;
  /** The Debian package the runtime layer comes from (for the image's SBOM and provenance). */
  runtimeDeb: DebFacts;
  /** The binary's build facts (for the image's SBOM and provenance). */
  build: BuildFacts;
}

const INFO_KEYS = ["arch", "version", "revision", "repository", "tag", "runtimeHistory", "runtimeDigest"];

export function encodeInfo(info: ImageInfo): Uint8Array {
  const labels = Object.fromEntries(Object.entries(info.labels).sort(([a], [b]) => (a < b ? -1 : 1)));
  const ordered = Object.fromEntries(INFO_KEYS.map((k) => [k, info[k as keyof ImageInfo]]));
  const rest = { runtimeDeb: orderedDeb(info.runtimeDeb), build: orderedFacts(info.build) };
  return new TextEncoder().encode(`${JSON.stringify({ ...ordered, labels, ...rest })}\n`);
}

export function parseInfo(bytes: Uint8Array): ImageInfo {
  const value = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  for (const key of INFO_KEYS)
    if (typeof value[key] !== "string") throw new Error(`image info: ${key} is not a string`);
  if (!ARCHS.includes(value.arch as Arch)) throw new Error(`image info: unknown arch ${String(value.arch)}`);
  const labels = value.labels as Record<string, unknown> | null;
  if (typeof labels !== "object" || !labels || Object.values(labels).some((v) => typeof v !== "string"))
    throw new Error("image info: labels is not a string map");
  checkDeb(value.runtimeDeb);
  const build = checkFacts(value.build);
  if (build.version !== value.version || build.revision !== value.revision)
    throw new Error("image info: the build facts are of another version or revision");
  return value as unknown as ImageInfo;
}

/** The binary's layer: /usr/local/bin/aicr, mode 0755, its parents 0755. */
export function binaryLayer(binary: Uint8Array): Layer {
  return buildLayer([{ type: "file", path: BINARY_PATH, mode: 0o755, data: binary }]);
}

const ociLabels = (info: ImageInfo): Record<string, string> => ({
  ...info.labels,
  "org.opencontainers.image.version": info.version,
  "org.opencontainers.image.revision": info.revision,
});

/** The annotations of manifests and the index: the org.opencontainers.image.* labels. */
const annotations = (info: ImageInfo): Record<string, string> =>
  Object.fromEntries(
    Object.entries(ociLabels(info)).filter(([k]) => k.startsWith("org.opencontainers.image.")),
  );

/** One platform's image: the runtime layer, then the binary's. */
export function aicrImage(info: ImageInfo, runtime: Layer, binary: Layer): BuiltImage {
  if (runtime.digest !== info.runtimeDigest)
    throw new Error(
      `runtime layer ${runtime.digest} is not the one the image info names (${info.runtimeDigest})`,
    );
  return buildImage({
    platform: { os: "linux", architecture: info.arch },
    entrypoint: [`/${BINARY_PATH}`],
    env: ["PATH=/usr/local/bin:/usr/bin:/bin"],
    // The restricted agent pod runs as 65534 too; the privileged one sets runAsUser 0 itself.
    user: "65534:65534",
    labels: ociLabels(info),
    layers: [
      { layer: runtime, createdBy: info.runtimeHistory },
      { layer: binary, createdBy: `aicr ${info.version} (${info.revision}) at /${BINARY_PATH}` },
    ],
    annotations: annotations(info),
  });
}

/**
 * The layout for the images (one info per image, in the same order); docker load gets amd64, else
 * the first. `referrers` (SBOMs, provenance, signatures of these images) travel in it too.
 */
export function aicrLayout(
  images: BuiltImage[],
  infos: ImageInfo[],
  referrers?: readonly Artifact[],
): Layout {
  const first = infos[0];
  if (!first || images.length !== infos.length) throw new Error("aicrLayout needs one info per image");
  for (const info of infos)
    if (info.repository !== first.repository || info.tag !== first.tag || info.revision !== first.revision)
      throw new Error(
        `images of different builds in one layout: ${info.arch} is ${info.tag} ${info.revision}`,
      );
  return buildLayout({
    images,
    repository: first.repository,
    tag: first.tag,
    annotations: annotations(first),
    dockerImage: images.find((i) => i.platform.architecture === "amd64") ?? images[0]!,
    referrers,
  });
}

/**
 * `aicr image save`: this binary as a single-platform image archive (OCI layout + Docker
 * manifest.json), built from the running executable and the runtime layer and image info the build
 * embedded in it, with the image's SBOM and provenance as referrers of its manifest. Same binary,
 * same carried files → the same manifest digest, SBOM and provenance `npm run image` wrote.
 * Never overwrites: the archive is written to a temp file beside the output and hard-linked into place.
 */
import { constants } from "node:fs";
import { link, lstat, open, readFile, rm, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { AicrError } from "../core/errors.ts";
import {
  ARCHS,
  type Arch,
  aicrImage,
  aicrLayout,
  binaryLayer,
  type ImageInfo,
  infoAssetName,
  parseInfo,
  runtimeAssetName,
} from "./_aicr-image.ts";
import { readElf } from "./_elf.ts";
import { layerFromBlob } from "./_layer.ts";
import { layoutArchive } from "./_layout.ts";
import { sha256Digest } from "./_oci.ts";
import { imageAttestations } from "./attest/_image-attestations.ts";

export interface SaveOptions {
  output: string;
  /** The binary to put in the image: process.execPath. */
  executable: string;
  /** Bun.embeddedFiles: where the build put the runtime layer and the image info. */
  embedded: readonly Blob[];
  version: string;
  revision: string;
  repository: string;
}

export interface SaveResult {
  /** The platform manifest's digest. */
  digest: string;
  platform: string;
  path: string;
  /** The referrers written with it: the SBOM's and the provenance's manifest digests and file names. */
  referrers: { digest: string; name: string }[];
}

const MACHINE_ARCH: Record<string, Arch> = { x86_64: "amd64", aarch64: "arm64" };
// an embedded file's name is its asset name; a Bun.file's (tests) is a path: compare the last part
const nameOf = (b: Blob): string => basename((b as Blob & { name?: string }).name ?? "");
const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

function carried(embedded: readonly Blob[]): { arch: Arch; layer: Blob; info: Blob } {
  for (const arch of ARCHS) {
    const layer = embedded.find((b) => nameOf(b) === runtimeAssetName(arch));
    const info = embedded.find((b) => nameOf(b) === infoAssetName(arch));
    if (layer && info) return { arch, layer, info };
  }
  throw new AicrError(
    "NOT_FOUND",
    "this aicr binary carries no runtime layer, so it cannot write its image",
    {
      remedy:
        "use a linux glibc build (dist/aicr or dist/aicr-linux-x64/-arm64 from npm run build); " +
        "from source, on musl or on macOS, run `npm run image` instead",
    },
  );
}

async function refuseExisting(output: string): Promise<void> {
  const existing = await lstat(output).catch(() => undefined);
  if (existing) {
    const what = existing.isSymbolicLink() ? "a symlink" : existing.isDirectory() ? "a directory" : "a file";
    throw new AicrError(
      "CONFLICT",
      `${JSON.stringify(output)} already exists (${what}); nothing was written`,
      {
        remedy: "remove it or choose another -o path; image save never overwrites",
        context: { path: output },
      },
    );
  }
  const parent = await stat(dirname(output)).catch(() => undefined);
  if (!parent?.isDirectory())
    throw new AicrError("INVALID_REQUEST", `the directory of ${JSON.stringify(output)} does not exist`, {
      remedy: "create it first or choose another -o path",
      context: { path: output },
    });
}

/** A carried file that does not parse or match is a broken build, not the operator's mistake. */
async function unusable<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw new AicrError("INTERNAL", "the runtime layer or image info this binary carries is unusable", {
      remedy: "rebuild the binary (npm run build)",
      cause: err,
    });
  }
}

function checkInfo(info: ImageInfo, arch: Arch, options: SaveOptions): void {
  const want = { arch, version: options.version, revision: options.revision, repository: options.repository };
  for (const [key, value] of Object.entries(want))
    if (info[key as keyof typeof want] !== value)
      throw new AicrError(
        "INTERNAL",
        `the carried image info says ${key} ${info[key as keyof ImageInfo]}, this binary ${value}`,
        {
          remedy: "rebuild the binary (npm run build); its embedded files come from another build",
        },
      );
}

/** Writes the bytes to a new file at `output`: temp file (O_EXCL|O_NOFOLLOW), then link; never replaces. */
async function writeNew(output: string, bytes: Uint8Array): Promise<void> {
  const temp = join(dirname(output), `.${basename(output)}.${process.pid}.${Date.now()}.tmp`);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  try {
    const handle = await open(temp, flags, 0o644);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temp, output); // fails with EEXIST instead of replacing whatever appeared meanwhile
  } catch (err) {
    if (errno(err) === "EEXIST")
      throw new AicrError(
        "CONFLICT",
        `${JSON.stringify(output)} appeared while writing; nothing was replaced`,
        {
          remedy: "remove it or choose another -o path",
          context: { path: output },
        },
      );
    throw new AicrError("INTERNAL", `cannot write ${JSON.stringify(output)}`, {
      remedy: "check the free space and permissions of its directory, or choose another -o path",
      cause: err,
    });
  } finally {
    await rm(temp, { force: true });
  }
}

export async function saveImage(options: SaveOptions): Promise<SaveResult> {
  const path = resolve(options.output);
  const { arch, layer, info: infoBlob } = carried(options.embedded);
  await refuseExisting(path);
  const info = await unusable(async () => parseInfo(new Uint8Array(await infoBlob.arrayBuffer())));
  checkInfo(info, arch, options);
  const binary = new Uint8Array(await readFile(options.executable));
  const machine = MACHINE_ARCH[readElf(binary).machine];
  if (machine !== arch)
    throw new AicrError(
      "INTERNAL",
      `${options.executable} is ${machine}, but it carries the ${arch} runtime layer`,
      { remedy: "this binary was built wrongly: use a release binary for this platform" },
    );
  const runtime = await unusable(async () => layerFromBlob(new Uint8Array(await layer.arrayBuffer())));
  const image = await unusable(async () => aicrImage(info, runtime, binaryLayer(binary)));
  const attestations = imageAttestations(info, image, sha256Digest(binary).slice("sha256:".length));
  const artifacts = attestations.map((a) => a.artifact);
  await writeNew(path, layoutArchive(aicrLayout([image], [info], artifacts)));
  return {
    digest: image.descriptor.digest,
    platform: `linux/${arch}`,
    path,
    referrers: attestations.map((a) => ({ digest: a.artifact.descriptor.digest, name: a.name })),
  };
}

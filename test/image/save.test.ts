import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Arch,
  aicrImage,
  binaryLayer,
  encodeInfo,
  type ImageInfo,
  infoAssetName,
  runtimeAssetName,
} from "../../src/image/_aicr-image.ts";
import { readOciArchive } from "../../src/image/_archive.ts";
import { sha256Digest } from "../../src/image/_oci.ts";
import { imageAttestations } from "../../src/image/attest/_image-attestations.ts";
import { type SaveOptions, saveImage } from "../../src/image/save.ts";
import { rejection } from "../support/reject.ts";
import { fakeBinary, fakeInfo, fakeRuntime } from "./_fixtures.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "aicr-save-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** What Bun.embeddedFiles holds in a linux build: two named blobs. */
function embedded(arch: Arch, info: ImageInfo, blob = fakeRuntime(arch).blob): Blob[] {
  return [
    new File([blob], runtimeAssetName(arch), { type: "application/gzip" }),
    new File([encodeInfo(info)], infoAssetName(arch)),
  ];
}

async function setup(arch: Arch, over: Partial<SaveOptions> = {}): Promise<SaveOptions> {
  const executable = join(dir, `aicr-${arch}`);
  await writeFile(executable, fakeBinary(arch));
  const info = fakeInfo(arch, fakeRuntime(arch));
  return {
    output: join(dir, "out.tar"),
    executable,
    embedded: embedded(arch, info),
    version: info.version,
    revision: info.revision,
    repository: info.repository,
    ...over,
  };
}

test("writes a one-platform archive whose manifest digest is the image's, its SBOM and provenance as referrers", async () => {
  for (const arch of ["amd64", "arm64"] as const) {
    const options = await setup(arch, { output: join(dir, `${arch}.tar`) });
    const saved = await saveImage(options);
    const runtime = fakeRuntime(arch);
    const info = fakeInfo(arch, runtime);
    const expected = aicrImage(info, runtime, binaryLayer(fakeBinary(arch)));
    const binarySha = sha256Digest(fakeBinary(arch)).slice(7);
    const attestations = imageAttestations(info, expected, binarySha);
    expect(saved).toEqual({
      digest: expected.descriptor.digest,
      platform: `linux/${arch}`,
      path: options.output,
      referrers: [
        {
          digest: attestations[0]!.artifact.descriptor.digest,
          name: `aicr-image-1.2.3.linux-${arch}.spdx.json`,
        },
        {
          digest: attestations[1]!.artifact.descriptor.digest,
          name: `aicr-image-1.2.3.linux-${arch}.provenance.json`,
        },
      ],
    });
    const oci = readOciArchive(new Uint8Array(await readFile(options.output)));
    expect(oci.images.map((i) => i.descriptor.digest)).toEqual([expected.descriptor.digest]);
    expect(oci.index.manifests[0]?.annotations?.["org.opencontainers.image.ref.name"]).toBe("v1.2.3");
    // the SBOM and provenance referrers of the manifest, each one layer: the bytes npm run image writes
    const referrers = oci.referrersOf(expected.descriptor.digest);
    expect(referrers.map((r) => r.descriptor.artifactType)).toEqual([
      "application/spdx+json",
      "application/vnd.in-toto+json",
    ]);
    for (const [i, r] of referrers.entries()) {
      expect(r.descriptor.digest).toBe(attestations[i]!.artifact.descriptor.digest);
      expect(oci.blob(r.manifest.layers[0]!.digest)).toEqual(attestations[i]!.data);
    }
    const sbom = JSON.parse(new TextDecoder().decode(attestations[0]!.data));
    expect(sbom.packages[0].externalRefs[0].referenceLocator).toContain(
      `pkg:oci/aicr@sha256%3A${expected.descriptor.digest.slice(7)}?arch=${arch}`,
    );
    const provenance = JSON.parse(new TextDecoder().decode(attestations[1]!.data));
    expect(provenance.subject).toEqual([
      { name: "registry.example/team/aicr", digest: { sha256: expected.descriptor.digest.slice(7) } },
    ]);
  }
  expect((await readdir(dir)).sort()).toEqual(["aicr-amd64", "aicr-arm64", "amd64.tar", "arm64.tar"]);
});

test("refuses without a carried runtime layer (from source, musl, darwin): NOT_FOUND", async () => {
  const options = await setup("amd64");
  for (const files of [[], [options.embedded[0]!], [options.embedded[1]!]]) {
    const err = await rejection(saveImage({ ...options, embedded: files }));
    expect(err.code).toBe("NOT_FOUND");
    expect(err.remedy).toContain("npm run image");
  }
  expect(await readdir(dir)).toEqual(["aicr-amd64"]);
});

test("never overwrites a file and never writes through a symlink: CONFLICT", async () => {
  const options = await setup("amd64");
  await writeFile(options.output, "precious");
  expect((await rejection(saveImage(options))).code).toBe("CONFLICT");
  expect(await readFile(options.output, "utf8")).toBe("precious");

  const link = join(dir, "link.tar");
  const target = join(dir, "target.tar");
  await symlink(target, link); // dangling: following it would create target.tar
  const err = await rejection(saveImage({ ...options, output: link }));
  expect(err.code).toBe("CONFLICT");
  expect(err.message).toContain("a symlink");
  expect((await readdir(dir)).sort()).toEqual(["aicr-amd64", "link.tar", "out.tar"]);

  await mkdir(join(dir, "d"));
  expect((await rejection(saveImage({ ...options, output: join(dir, "d") }))).code).toBe("CONFLICT");
});

test("refuses an output whose directory does not exist: INVALID_REQUEST", async () => {
  const options = await setup("amd64");
  const err = await rejection(saveImage({ ...options, output: join(dir, "missing", "out.tar") }));
  expect(err.code).toBe("INVALID_REQUEST");
});

test("refuses carried files from another build, a damaged layer, or another architecture: INTERNAL", async () => {
  const options = await setup("amd64");
  const other = await rejection(saveImage({ ...options, revision: "f".repeat(40) }));
  expect(other.code).toBe("INTERNAL");
  expect(other.message).toContain("revision");

  const info = fakeInfo("amd64", fakeRuntime("amd64"));
  const damaged = embedded("amd64", info, fakeRuntime("arm64").blob);
  expect((await rejection(saveImage({ ...options, embedded: damaged }))).code).toBe("INTERNAL");

  await writeFile(options.executable, fakeBinary("arm64"));
  const wrongArch = await rejection(saveImage(options));
  expect(wrongArch.code).toBe("INTERNAL");
  expect(wrongArch.message).toContain("carries the amd64 runtime layer");
  expect(await readdir(dir)).toEqual(["aicr-amd64"]);
});

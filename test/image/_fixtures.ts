/** Small images for the unit tests: a fake runtime layer, its image info, a fake binary. */
import { type Arch, aicrImage, binaryLayer, type ImageInfo } from "../../src/image/_aicr-image.ts";
import { buildLayer, type Layer } from "../../src/image/_layer.ts";
import type { BuiltImage } from "../../src/image/_layout.ts";
import type { Descriptor } from "../../src/image/_oci.ts";
import {
  ARTIFACT,
  type Artifact,
  buildArtifact,
  PREDICATE_TYPE_ANNOTATION,
  TITLE_ANNOTATION,
} from "../../src/image/_referrers.ts";
import { BUN_RUNTIME_PACKAGE, type BuildFacts } from "../../src/image/attest/_facts.ts";
import { fakeElf } from "./_elf.ts";

export const fakeRuntime = (arch: Arch): Layer =>
  buildLayer([
    {
      type: "file",
      path: `lib/${arch}/libc.so.6`,
      mode: 0o755,
      data: new TextEncoder().encode(`libc ${arch}`),
    },
    { type: "dir", path: "tmp", mode: 0o1777 },
  ]);

export const fakeBinary = (arch: Arch): Uint8Array =>
  fakeElf({
    machine: arch === "amd64" ? "x86_64" : "aarch64",
    interpreter: arch === "amd64" ? "/lib64/ld-linux-x86-64.so.2" : "/lib/ld-linux-aarch64.so.1",
    needed: ["libc.so.6"],
  });

export function fakeInfo(arch: Arch, runtime: Layer, over: Partial<ImageInfo> = {}): ImageInfo {
  return {
    arch,
    version: "1.2.3",
    revision: "0123456789abcdef0123456789abcdef01234567",
    repository: "registry.example/team/aicr",
    tag: "v1.2.3",
    labels: {
      "org.opencontainers.image.title": "aicr",
      "org.opencontainers.image.source": "https://example.invalid/aicr",
      "org.opencontainers.image.licenses": "Apache-2.0",
      "org.opencontainers.image.description": "test image",
      "run.aicr.runtime.libc6": `2.36-test-${arch}`,
    },
    runtimeHistory: `fake runtime ${arch}`,
    runtimeDigest: runtime.digest,
    runtimeDeb: {
      name: "libc6",
      version: `2.36-test-${arch}`,
      architecture: arch,
      sha256: "d".repeat(64),
      url: `http://deb.example/pool/main/g/glibc/libc6_2.36-test_${arch}.deb`,
      distro: "debian-12",
    },
    build: fakeFacts(arch === "amd64" ? "linux-x64" : "linux-arm64"),
    ...over,
  };
}

/** A build's facts as scripts/build.ts records them (two bundled packages, Bun's runtime). */
export function fakeFacts(target: string, over: Partial<BuildFacts> = {}): BuildFacts {
  const integrity = (c: string) => `sha512-${Buffer.alloc(64, c).toString("base64")}`;
  return {
    version: "1.2.3",
    revision: "0123456789abcdef0123456789abcdef01234567",
    built: "2026-01-02T03:04:05Z",
    repository: "registry.example/team/aicr",
    license: "Apache-2.0",
    target,
    command: `bun scripts/build.ts --targets ${target}`,
    bun: "1.4.5",
    lockfileSha256: "e".repeat(64),
    runtime: {
      name: BUN_RUNTIME_PACKAGE[target]!,
      version: "1.4.5",
      integrity: integrity("b"),
      license: "MIT",
    },
    packages: [
      { name: "@kubernetes/client-node", version: "1.4.0", integrity: integrity("k"), license: "Apache-2.0" },
      { name: "yaml", version: "2.9.1", integrity: integrity("y"), license: "ISC" },
    ],
    ...over,
  };
}

export function fakeImage(arch: Arch): { image: BuiltImage; info: ImageInfo } {
  const runtime = fakeRuntime(arch);
  const info = fakeInfo(arch, runtime);
  return { image: aicrImage(info, runtime, binaryLayer(fakeBinary(arch))), info };
}

/** A stand-in SBOM referrer of `subject`: an SPDX artifact whose layer is titled `name`. */
export const fakeSbom = (subject: Descriptor, name: string): Artifact =>
  buildArtifact({
    artifactType: ARTIFACT.spdx,
    subject,
    layers: [
      {
        mediaType: ARTIFACT.spdx,
        data: new TextEncoder().encode(`{"name":"${name}"}\n`),
        annotations: { [TITLE_ANNOTATION]: name },
      },
    ],
  });

/** A stand-in provenance referrer of `subject` (in-toto, SLSA v1 predicate type). */
export const fakeProvenance = (subject: Descriptor): Artifact =>
  buildArtifact({
    artifactType: ARTIFACT.intoto,
    subject,
    layers: [
      {
        mediaType: ARTIFACT.intoto,
        data: new TextEncoder().encode(`{"subject":"${subject.digest}"}\n`),
      },
    ],
    annotations: { [PREDICATE_TYPE_ANNOTATION]: "https://slsa.dev/provenance/v1" },
  });

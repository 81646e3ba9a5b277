import { expect, test } from "bun:test";
import {
  aicrImage,
  aicrLayout,
  binaryLayer,
  encodeInfo,
  type ImageInfo,
  parseInfo,
} from "../../src/image/_aicr-image.ts";
import { readOciArchive } from "../../src/image/_archive.ts";
import { EPOCH, layoutArchive } from "../../src/image/_layout.ts";
import { type ImageConfig, type Index, type Manifest, MEDIA, sha256Digest } from "../../src/image/_oci.ts";
import { readTar } from "../../src/image/_tar.ts";
import { fakeBinary, fakeImage, fakeInfo, fakeRuntime } from "./_fixtures.ts";

const json = <T>(bytes: Uint8Array | undefined): T => JSON.parse(new TextDecoder().decode(bytes)) as T;

function multiArch() {
  const amd = fakeImage("amd64");
  const arm = fakeImage("arm64");
  const layout = aicrLayout([amd.image, arm.image], [amd.info, arm.info]);
  return { amd, arm, layout, archive: layoutArchive(layout) };
}

test("the config: entrypoint, env, user, labels, epoch, diff IDs and one history line per layer", () => {
  const { amd } = multiArch();
  const config = json<ImageConfig>(amd.image.config);
  expect(amd.image.configDigest).toBe(sha256Digest(amd.image.config));
  expect(config.created).toBe(EPOCH);
  expect(config.architecture).toBe("amd64");
  expect(config.os).toBe("linux");
  expect(config.config.Entrypoint).toEqual(["/usr/local/bin/aicr"]);
  expect(config.config.Env).toEqual(["PATH=/usr/local/bin:/usr/bin:/bin"]);
  expect(config.config.User).toBe("65534:65534");
  const labels = config.config.Labels ?? {};
  expect(Object.keys(labels)).toEqual([...Object.keys(labels)].sort());
  expect(labels["org.opencontainers.image.version"]).toBe("1.2.3");
  expect(labels["org.opencontainers.image.revision"]).toBe("0123456789abcdef0123456789abcdef01234567");
  expect(labels["run.aicr.runtime.libc6"]).toBe("2.36-test-amd64");
  expect(config.rootfs.diff_ids).toEqual(amd.image.layers.map((l) => l.diffId));
  expect(config.history?.map((h) => h.created_by)).toEqual([
    "fake runtime amd64",
    "aicr 1.2.3 (0123456789abcdef0123456789abcdef01234567) at /usr/local/bin/aicr",
  ]);
  const manifest = json<Manifest>(amd.image.manifest);
  expect(manifest.mediaType).toBe(MEDIA.manifest);
  expect(manifest.config).toEqual({
    mediaType: MEDIA.config,
    digest: amd.image.configDigest,
    size: amd.image.config.length,
  });
  expect(manifest.layers.map((l) => l.mediaType)).toEqual([MEDIA.layerGzip, MEDIA.layerGzip]);
  expect(manifest.annotations?.["org.opencontainers.image.version"]).toBe("1.2.3");
  expect(manifest.annotations?.["run.aicr.runtime.libc6"]).toBeUndefined();
});

test("a multi-platform layout: index.json names one image index by tag; it reads back through readOciArchive", () => {
  const { amd, arm, layout, archive } = multiArch();
  const oci = readOciArchive(archive);
  expect(oci.index.manifests).toHaveLength(1);
  const top = oci.index.manifests[0]!;
  expect(top.mediaType).toBe(MEDIA.index);
  expect(top.digest).toBe(layout.digest);
  expect(top.annotations).toEqual({
    "io.containerd.image.name": "registry.example/team/aicr:v1.2.3",
    "org.opencontainers.image.ref.name": "v1.2.3",
  });
  const imageIndex = json<Index>(oci.blob(layout.digest));
  expect(imageIndex.manifests.map((m) => [m.digest, m.platform])).toEqual([
    [amd.image.descriptor.digest, { os: "linux", architecture: "amd64" }],
    [arm.image.descriptor.digest, { os: "linux", architecture: "arm64" }],
  ]);
  expect(oci.images.map((i) => i.descriptor.digest)).toEqual([
    amd.image.descriptor.digest,
    arm.image.descriptor.digest,
  ]);
});

test("manifest.json names the amd64 image only, for docker load", () => {
  const { amd, archive } = multiArch();
  const files = new Map(readTar(archive).map((m) => [m.path, m.data]));
  const docker = json<{ Config: string; RepoTags: string[]; Layers: string[] }[]>(files.get("manifest.json"));
  expect(docker).toEqual([
    {
      Config: `blobs/sha256/${amd.image.configDigest.slice(7)}`,
      RepoTags: ["registry.example/team/aicr:v1.2.3"],
      Layers: amd.image.layers.map((l) => `blobs/sha256/${l.digest.slice(7)}`),
    },
  ]);
  for (const path of [docker[0]!.Config, ...docker[0]!.Layers]) expect(files.has(path)).toBe(true);
  expect(json<{ imageLayoutVersion: string }>(files.get("oci-layout"))).toEqual({
    imageLayoutVersion: "1.0.0",
  });
});

test("the archive is deterministic: same inputs, same bytes; entries in tree order with mtime 0", () => {
  const a = multiArch().archive;
  const b = multiArch().archive;
  expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  const paths = readTar(a).map((m) => m.path);
  expect(paths.slice(0, 2)).toEqual(["blobs/", "blobs/sha256/"]);
  expect(paths.slice(-3)).toEqual(["index.json", "manifest.json", "oci-layout"]);
  const blobs = paths.filter((p) => p.startsWith("blobs/sha256/") && p.length > 13);
  expect(blobs).toEqual([...blobs].sort());
  for (let at = 0; at + 512 <= a.length && a[at] !== 0; ) {
    expect(new TextDecoder().decode(a.subarray(at + 136, at + 147))).toBe("00000000000");
    const size = Number.parseInt(new TextDecoder().decode(a.subarray(at + 124, at + 135)), 8);
    at += 512 + Math.ceil(size / 512) * 512;
  }
});

test("a single-platform layout names its manifest directly, with platform and tag", () => {
  const { image, info } = fakeImage("arm64");
  const layout = aicrLayout([image], [info]);
  const oci = readOciArchive(layoutArchive(layout));
  expect(layout.digest).toBe(image.descriptor.digest);
  expect(oci.index.manifests).toEqual([
    {
      ...image.descriptor,
      annotations: {
        "io.containerd.image.name": "registry.example/team/aicr:v1.2.3",
        "org.opencontainers.image.ref.name": "v1.2.3",
      },
    },
  ]);
  const files = new Map(readTar(layoutArchive(layout)).map((m) => [m.path, m.data]));
  expect(json<{ Config: string }[]>(files.get("manifest.json"))[0]!.Config).toBe(
    `blobs/sha256/${image.configDigest.slice(7)}`,
  );
});

test("the same binary, runtime layer and info give the same manifest digest", () => {
  expect(fakeImage("amd64").image.descriptor.digest).toBe(fakeImage("amd64").image.descriptor.digest);
  const runtime = fakeRuntime("amd64");
  const other = aicrImage(
    fakeInfo("amd64", runtime, { revision: "f".repeat(40) }),
    runtime,
    binaryLayer(fakeBinary("amd64")),
  );
  expect(other.descriptor.digest).not.toBe(fakeImage("amd64").image.descriptor.digest);
});

test("an image refuses a runtime layer its info does not name; a layout refuses images of two builds", () => {
  const runtime = fakeRuntime("amd64");
  const info = fakeInfo("amd64", fakeRuntime("arm64"));
  expect(() => aicrImage(info, runtime, binaryLayer(fakeBinary("amd64")))).toThrow(
    "is not the one the image info names",
  );
  const amd = fakeImage("amd64");
  const arm = fakeImage("arm64");
  expect(() => aicrLayout([amd.image, arm.image], [amd.info, { ...arm.info, tag: "v9" }])).toThrow(
    "different builds",
  );
});

test("image info: encoded canonically, parsed back, malformed info refused", () => {
  const info = fakeInfo("amd64", fakeRuntime("amd64"));
  const bytes = encodeInfo(info);
  expect(parseInfo(bytes)).toEqual(info);
  const shuffled: ImageInfo = { ...info, labels: Object.fromEntries(Object.entries(info.labels).reverse()) };
  expect(Buffer.from(encodeInfo(shuffled)).equals(Buffer.from(bytes))).toBe(true);
  const bad = (value: unknown) => () => parseInfo(new TextEncoder().encode(JSON.stringify(value)));
  expect(bad({ ...info, arch: "riscv64" })).toThrow("unknown arch");
  expect(bad({ ...info, version: 1 })).toThrow("version is not a string");
  expect(bad({ ...info, labels: { a: 1 } })).toThrow("labels");
  expect(() => parseInfo(new TextEncoder().encode("{"))).toThrow();
});

import { expect, test } from "bun:test";
import {
  aicrImage,
  aicrLayout,
  binaryLayer,
  encodeInfo,
  type ImageInfo,
  parseInfo,
} from "../../src/image/_aicr-image.ts";
import { ArchiveError, readOciArchive } from "../../src/image/_archive.ts";
import { appendReferrers, EPOCH, layoutArchive } from "../../src/image/_layout.ts";
import {
  canonicalJson,
  type Descriptor,
  type ImageConfig,
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
  EMPTY_CONFIG,
} from "../../src/image/_referrers.ts";
import { readTar } from "../../src/image/_tar.ts";
import {
  fakeBinary,
  fakeImage,
  fakeInfo,
  fakeRuntime,
  fakeProvenance as provenanceOf,
  fakeSbom as sbomOf,
} from "./_fixtures.ts";

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

const enc = (text: string): Uint8Array => new TextEncoder().encode(text);
const signatureOf = (subject: Descriptor): Artifact =>
  buildArtifact({
    artifactType: ARTIFACT.cosignSignature,
    subject,
    layers: [
      {
        mediaType: ARTIFACT.simpleSigning,
        data: enc(`{"critical":{"image":{"docker-manifest-digest":"${subject.digest}"}}}`),
        annotations: { [COSIGN_SIGNATURE_ANNOTATION]: "c2ln" },
      },
    ],
  });

/** The index, both platform manifests, an SBOM and provenance of each, a signature of the index and of one SBOM. */
function withReferrers() {
  const { amd, arm, layout } = multiArch();
  const indexDescriptor: Descriptor = { mediaType: MEDIA.index, digest: layout.digest, size: 0 };
  const plain = new Map(layout.files.map((f) => [f.path, f.data]));
  indexDescriptor.size = plain.get(`blobs/sha256/${layout.digest.slice(7)}`)!.length;
  const amdSbom = sbomOf(amd.image.descriptor, "amd.spdx.json");
  const all = [
    signatureOf(amdSbom.descriptor),
    provenanceOf(arm.image.descriptor),
    sbomOf(arm.image.descriptor, "arm.spdx.json"),
    amdSbom,
    provenanceOf(amd.image.descriptor),
    signatureOf(indexDescriptor),
  ];
  return { amd, arm, indexDescriptor, all, amdSbom };
}

test("referrers: blobs in blobs/, untagged descriptors after the tagged root, ordered by subject, artifactType, digest", () => {
  const { amd, arm, indexDescriptor, all, amdSbom } = withReferrers();
  const layout = aicrLayout([amd.image, arm.image], [amd.info, arm.info], all);
  const archive = layoutArchive(layout);
  const oci = readOciArchive(archive);
  const entries = oci.index.manifests;
  expect(entries[0]!.annotations?.["org.opencontainers.image.ref.name"]).toBe("v1.2.3");
  const subjectOf = (digest: string) => all.find((a) => a.descriptor.digest === digest)!.subject.digest;
  expect(entries.slice(1).map((d) => [subjectOf(d.digest), d.artifactType])).toEqual([
    [indexDescriptor.digest, ARTIFACT.cosignSignature],
    [amd.image.descriptor.digest, ARTIFACT.spdx],
    [amd.image.descriptor.digest, ARTIFACT.intoto],
    [arm.image.descriptor.digest, ARTIFACT.spdx],
    [arm.image.descriptor.digest, ARTIFACT.intoto],
    [amdSbom.descriptor.digest, ARTIFACT.cosignSignature],
  ]);
  for (const d of entries.slice(1)) {
    expect(d.annotations?.["org.opencontainers.image.ref.name"]).toBeUndefined();
    expect(d).toEqual(all.find((a) => a.descriptor.digest === d.digest)!.descriptor);
  }
  // readOciArchive: roots are the images, referrers apart, each found by its subject
  expect(oci.roots.map((d) => d.digest)).toEqual([layout.digest]);
  expect(oci.images.map((i) => i.descriptor.digest)).toEqual([
    amd.image.descriptor.digest,
    arm.image.descriptor.digest,
  ]);
  expect(oci.manifests.map((d) => d.digest)).toEqual([
    layout.digest,
    amd.image.descriptor.digest,
    arm.image.descriptor.digest,
  ]);
  expect(oci.referrers).toHaveLength(6);
  expect(oci.referrersOf(amd.image.descriptor.digest).map((r) => r.manifest.artifactType)).toEqual([
    ARTIFACT.spdx,
    ARTIFACT.intoto,
  ]);
  expect(oci.referrersOf(amdSbom.descriptor.digest).map((r) => r.descriptor.digest)).toEqual([
    all[0]!.descriptor.digest,
  ]);
  expect(oci.referrersOf("sha256:0")).toEqual([]);
  for (const a of all) {
    expect(oci.blob(a.descriptor.digest)).toEqual(a.manifest);
    for (const b of a.blobs) expect(oci.blob(b.digest)).toEqual(b.data);
  }
  // the input order does not matter; the same inputs give the same bytes
  const reversed = layoutArchive(
    aicrLayout([amd.image, arm.image], [amd.info, arm.info], [...all].reverse()),
  );
  expect(Buffer.from(reversed).equals(Buffer.from(archive))).toBe(true);
  // manifest.json (docker load) is what it was without referrers
  const files = new Map(readTar(archive).map((m) => [m.path, m.data]));
  const before = new Map(readTar(multiArch().archive).map((m) => [m.path, m.data]));
  expect(files.get("manifest.json")).toEqual(before.get("manifest.json"));
});

test("a referrer whose subject is not in the layout is refused", () => {
  const { amd, arm } = multiArch();
  const stranger = sbomOf({ mediaType: MEDIA.manifest, digest: sha256Digest("elsewhere"), size: 9 }, "x");
  expect(() => aicrLayout([amd.image, arm.image], [amd.info, arm.info], [stranger])).toThrow(
    `describes ${sha256Digest("elsewhere")}, which is not in the layout`,
  );
  // single platform: the manifest is the root; referrers of it are fine, of another image not
  const single = aicrLayout([amd.image], [amd.info], [sbomOf(amd.image.descriptor, "a")]);
  expect(readOciArchive(layoutArchive(single)).referrersOf(amd.image.descriptor.digest)).toHaveLength(1);
  expect(() => aicrLayout([amd.image], [amd.info], [sbomOf(arm.image.descriptor, "a")])).toThrow(
    "not in the layout",
  );
});

test("appendReferrers: adding later gives the bytes of building with all at once; twice adds nothing", () => {
  const { amd, arm, all } = withReferrers();
  const full = layoutArchive(aicrLayout([amd.image, arm.image], [amd.info, arm.info], all));
  const partial = layoutArchive(aicrLayout([amd.image, arm.image], [amd.info, arm.info], all.slice(1, 5)));
  const bare = layoutArchive(aicrLayout([amd.image, arm.image], [amd.info, arm.info]));
  // the signatures added afterwards (a signature of an SBOM among them)
  const signed = appendReferrers(partial, [all[0]!, all[5]!]);
  expect(Buffer.from(signed).equals(Buffer.from(full))).toBe(true);
  expect(Buffer.from(appendReferrers(bare, all)).equals(Buffer.from(full))).toBe(true);
  // idempotent: the same referrers again, or none, leave the bytes as they are
  expect(appendReferrers(full, all)).toBe(full);
  expect(appendReferrers(full, [])).toBe(full);
  // a referrer of something the archive does not hold
  const stranger = sbomOf({ mediaType: MEDIA.manifest, digest: sha256Digest("elsewhere"), size: 9 }, "x");
  expect(() => appendReferrers(full, [stranger])).toThrow("not in the layout");
  // every tar entry has mtime 0 and the tree order
  const paths = readTar(signed).map((m) => m.path);
  expect(paths.slice(-3)).toEqual(["index.json", "manifest.json", "oci-layout"]);
});

test("readOciArchive refuses a referrer whose subject is absent, or whose blob is missing or altered", () => {
  const { amd, arm, all } = withReferrers();
  const archive = layoutArchive(aicrLayout([amd.image, arm.image], [amd.info, arm.info], all));
  const files = readTar(archive).flatMap((m) => (m.type === "file" ? [{ path: m.path, data: m.data }] : []));
  const rewrite = (
    edit: (files: { path: string; data: Uint8Array }[]) => { path: string; data: Uint8Array }[],
  ) => layoutArchive({ files: edit(files.map((f) => ({ ...f }))) });
  const sbom = all[3]!;
  const layer = sbom.blobs[1]!;
  // the SBOM's layer missing
  expect(() =>
    readOciArchive(rewrite((fs) => fs.filter((f) => f.path !== `blobs/sha256/${layer.digest.slice(7)}`))),
  ).toThrow(`layer ${layer.digest} is missing from the archive`);
  // the SBOM's layer altered
  expect(() =>
    readOciArchive(
      rewrite((fs) =>
        fs.map((f) =>
          f.path === `blobs/sha256/${layer.digest.slice(7)}`
            ? { ...f, data: enc("x".repeat(layer.data.length)) }
            : f,
        ),
      ),
    ),
  ).toThrow(`layer ${layer.digest} has digest`);
  // index.json names a referrer whose subject is not in the archive
  const stranger = sbomOf({ mediaType: MEDIA.manifest, digest: sha256Digest("elsewhere"), size: 9 }, "x");
  const withStranger = rewrite((fs) => [
    ...fs.map((f) => {
      if (f.path !== "index.json") return f;
      const index = json<Index>(f.data);
      return {
        ...f,
        data: canonicalJson({ ...index, manifests: [...index.manifests, stranger.descriptor] }),
      };
    }),
    { path: `blobs/sha256/${stranger.descriptor.digest.slice(7)}`, data: stranger.manifest },
    ...stranger.blobs
      .filter((b) => b.digest !== EMPTY_CONFIG.digest)
      .map((b) => ({ path: `blobs/sha256/${b.digest.slice(7)}`, data: b.data })),
  ]);
  expect(kindOf(() => readOciArchive(withStranger))).toBe("integrity");
  expect(() => readOciArchive(withStranger)).toThrow(
    `describes ${sha256Digest("elsewhere")}, which is not in the layout`,
  );
});

/** The ArchiveError's kind a read throws, or what else happened. */
function kindOf(read: () => unknown): string {
  try {
    read();
    return "no error";
  } catch (err) {
    return err instanceof ArchiveError ? err.kind : `not an ArchiveError: ${err}`;
  }
}

test("ArchiveError tells a file that is no OCI layout (format) from a layout whose content was altered (integrity)", () => {
  const { amd, arm } = withReferrers();
  const good = layoutArchive(aicrLayout([amd.image, arm.image], [amd.info, arm.info]));
  expect(kindOf(() => readOciArchive(new TextEncoder().encode("not a tar, only some text")))).toBe("format");
  expect(kindOf(() => readOciArchive(good.subarray(0, 700)))).toBe("format");
  const files = readTar(good).flatMap((m) => (m.type === "file" ? [{ path: m.path, data: m.data }] : []));
  const tarOf = (fs: { path: string; data: Uint8Array }[]) => layoutArchive({ files: fs });
  // the largest blob: a layer
  const layer = files
    .filter((f) => f.path.startsWith("blobs/"))
    .reduce((a, b) => (b.data.length > a.data.length ? b : a));
  const altered = files.map((f) =>
    f === layer ? { path: f.path, data: f.data.map((b, i) => (i === 0 ? b ^ 1 : b)) } : f,
  );
  expect(kindOf(() => readOciArchive(tarOf(altered)))).toBe("integrity");
  expect(kindOf(() => readOciArchive(tarOf(files.filter((f) => f !== layer))))).toBe("integrity");
  expect(kindOf(() => readOciArchive(tarOf(files.filter((f) => f.path !== "oci-layout"))))).toBe("format");
});

/**
 * npm run image end to end: reproducible bytes (archive, SBOMs, provenance), an independently
 * checked OCI layout with exactly the expected files and referrers, and skopeo reads both archive
 * forms. (image-run.test.ts runs what it holds.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ARCHS, aicrImage, aicrLayout, binaryLayer } from "../../src/image/_aicr-image.ts";
import { gunzip, layerFromBlob } from "../../src/image/_layer.ts";
import { layoutArchive } from "../../src/image/_layout.ts";
import { readTar } from "../../src/image/_tar.ts";
import { imageAttestations } from "../../src/image/attest/_image-attestations.ts";
import { binaryProvenance } from "../../src/image/attest/_provenance.ts";
import { attestationBytes, binarySbom } from "../../src/image/attest/_spdx.ts";
import { provenanceProblems, spdxProblems } from "./_attest-check.ts";
import {
  ARCHIVE,
  BINARIES,
  type Checked,
  carried,
  checkBinaryNeeds,
  DIST,
  ensureImage,
  extractAndCheck,
  HAS_SKOPEO,
  HOST_ARCH,
  imageOf,
  LAYOUT,
  run,
  sha256,
  VERSION,
} from "./_image.ts";

let work: string;
let checked: Checked;
const image = (arch: string) => imageOf(checked, arch);

beforeAll(async () => {
  await ensureImage();
  work = await mkdtemp(join(tmpdir(), "aicr-image-test-"));
  checked = await extractAndCheck(ARCHIVE, join(work, "layout"));
}, 180_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

test("rebuilding from the same binaries and caches gives the same archive and attestations, byte for byte", async () => {
  const all = await carried(ARCHS);
  const images = [];
  const attestations = [];
  for (const c of all) {
    const binary = new Uint8Array(await readFile(BINARIES[c.arch]));
    const built = aicrImage(
      c.info,
      layerFromBlob(new Uint8Array(await readFile(c.runtimeLayer))),
      binaryLayer(binary),
    );
    images.push(built);
    attestations.push(...imageAttestations(c.info, built, sha256(binary).slice(7)));
  }
  const again = layoutArchive(
    aicrLayout(
      images,
      all.map((c) => c.info),
      attestations.map((a) => a.artifact),
    ),
  );
  const archive = new Uint8Array(await readFile(ARCHIVE));
  expect(sha256(again)).toBe(sha256(archive));
  const sums = await readFile(join(DIST, "SHA256SUMS"), "utf8");
  expect(sums).toContain(`${sha256(archive).slice(7)}  aicr-image-${VERSION}.tar\n`);
  // the plain files beside the archive: the referrers' layers, byte for byte, each in SHA256SUMS
  expect(attestations.map((a) => a.name)).toEqual(
    ARCHS.flatMap((arch) => [
      `aicr-image-${VERSION}.linux-${arch}.spdx.json`,
      `aicr-image-${VERSION}.linux-${arch}.provenance.json`,
    ]),
  );
  for (const a of attestations) {
    const file = new Uint8Array(await readFile(join(DIST, a.name)));
    expect(sha256(file)).toBe(sha256(a.data));
    expect(sums).toContain(`${sha256(file).slice(7)}  ${a.name}\n`);
  }
}, 120_000);

test("each binary's SBOM and provenance: the build facts it carries, its digest, in SHA256SUMS", async () => {
  const sums = await readFile(join(DIST, "SHA256SUMS"), "utf8");
  for (const c of await carried(ARCHS)) {
    const name = `aicr-${c.info.build.target}`;
    const binary = { name, sha256: sha256(new Uint8Array(await readFile(BINARIES[c.arch]))).slice(7) };
    const sbom = await readFile(join(DIST, `${name}.spdx.json`));
    const provenance = await readFile(join(DIST, `${name}.provenance.json`));
    expect(sbom.toString("utf8")).toBe(
      new TextDecoder().decode(attestationBytes(binarySbom(c.info.build, binary))),
    );
    expect(provenance.toString("utf8")).toBe(
      new TextDecoder().decode(attestationBytes(binaryProvenance(c.info.build, binary))),
    );
    const doc = JSON.parse(sbom.toString("utf8"));
    expect(spdxProblems(doc)).toEqual([]);
    expect(provenanceProblems(JSON.parse(provenance.toString("utf8")))).toEqual([]);
    expect(doc.packages[0].checksums).toEqual([{ algorithm: "SHA256", checksumValue: binary.sha256 }]);
    expect(doc.packages.map((p: any) => p.name)).toContain(
      c.arch === "amd64" ? "@oven/bun-linux-x64" : "@oven/bun-linux-aarch64",
    );
    for (const [file, data] of [
      [name, null],
      [`${name}.spdx.json`, sbom],
      [`${name}.provenance.json`, provenance],
    ] as const) {
      const digest = data ? sha256(new Uint8Array(data)).slice(7) : binary.sha256;
      expect(sums).toContain(`${digest}  ${file}\n`);
    }
  }
}, 60_000);

test("each platform manifest has its SBOM and provenance as referrers, naming its digest", () => {
  for (const img of checked.images) {
    const mine = checked.referrers.filter((r) => r.manifest.subject.digest === img.digest);
    expect(mine.map((r) => r.descriptor.artifactType)).toEqual([
      "application/spdx+json",
      "application/vnd.in-toto+json",
    ]);
    const [sbom, provenance] = mine.map((r) => JSON.parse(new TextDecoder().decode(r.layer)));
    expect(spdxProblems(sbom)).toEqual([]);
    expect(provenanceProblems(provenance)).toEqual([]);
    const arch = img.platform.architecture;
    expect(sbom.name).toBe(`aicr-image-${VERSION}-linux-${arch}`);
    expect(sbom.packages[0].externalRefs[0].referenceLocator).toStartWith(
      `pkg:oci/aicr@sha256%3A${img.digest.slice(7)}?arch=${arch}&repository_url=`,
    );
    const libc = sbom.packages.find((p: any) => p.name === "libc6");
    expect(libc.versionInfo).toBe(img.config.config.Labels["run.aicr.runtime.libc6"]);
    expect(libc.checksums[0].checksumValue).toBe(img.config.config.Labels["run.aicr.runtime.libc6.sha256"]);
    expect(provenance.subject[0].digest.sha256).toBe(img.digest.slice(7));
    expect(mine[1]!.descriptor.annotations).toEqual({
      "in-toto.io/predicate-type": "https://slsa.dev/provenance/v1",
    });
  }
  // the SBOMs and provenance of the two platforms, nothing else (unsigned)
  expect(checked.referrers).toHaveLength(4);
});

test("the layout directory holds exactly the archive's files", async () => {
  const members = readTar(new Uint8Array(await readFile(ARCHIVE))).filter((m) => m.type === "file");
  const onDisk = (await readdir(LAYOUT, { recursive: true })).filter(
    (f) => !f.endsWith("sha256") && f !== "blobs",
  );
  expect(onDisk.sort()).toEqual(members.map((m) => m.path).sort());
  for (const m of members.filter((m) => m.data.length < 1 << 20))
    expect(sha256(new Uint8Array(await readFile(join(LAYOUT, m.path))))).toBe(sha256(m.data));
}, 30_000);

test("independent check: index.json → image index → linux/amd64 and linux/arm64, every digest and size", () => {
  expect(checked.top.mediaType).toBe("application/vnd.oci.image.index.v1+json");
  expect(checked.top.annotations["org.opencontainers.image.ref.name"]).toBe(`v${VERSION}`);
  expect(checked.images.map((i) => `${i.platform.os}/${i.platform.architecture}`)).toEqual([
    "linux/amd64",
    "linux/arm64",
  ]);
  for (const i of checked.images) {
    expect(i.config.config.Entrypoint).toEqual(["/usr/local/bin/aicr"]);
    expect(i.config.config.User).toBe("65534:65534");
    expect(i.config.config.Labels["org.opencontainers.image.version"]).toBe(VERSION);
    expect(i.config.config.Labels["run.aicr.runtime.libc6"]).toMatch(/^2\.\d+-/);
    expect(i.layers).toHaveLength(2);
  }
});

const listing = async (layer: string): Promise<string[]> =>
  (await run(["tar", "-tvzf", layer])).stdout
    .trim()
    .split("\n")
    .map((l) => {
      const f = l.split(/\s+/);
      return `${f[0]} ${f[1]} ${f.slice(5).join(" ")}`;
    });

const DPKG = [
  "drwxr-xr-x 0/0 var/",
  "drwxr-xr-x 0/0 var/lib/",
  "drwxr-xr-x 0/0 var/lib/dpkg/",
  "drwxr-xr-x 0/0 var/lib/dpkg/status.d/",
  "-rw-r--r-- 0/0 var/lib/dpkg/status.d/libc6",
  "-rw-r--r-- 0/0 var/lib/dpkg/status.d/libc6.md5sums",
];

test("the runtime layers hold the loader, libc, libm, libdl, libpthread, /tmp and libc6's dpkg record, nothing else", async () => {
  expect(await listing(image("amd64").layers[0]!)).toEqual([
    "drwxr-xr-x 0/0 lib/",
    "drwxr-xr-x 0/0 lib/x86_64-linux-gnu/",
    "-rwxr-xr-x 0/0 lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
    "-rwxr-xr-x 0/0 lib/x86_64-linux-gnu/libc.so.6",
    "-rw-r--r-- 0/0 lib/x86_64-linux-gnu/libdl.so.2",
    "-rw-r--r-- 0/0 lib/x86_64-linux-gnu/libm.so.6",
    "-rw-r--r-- 0/0 lib/x86_64-linux-gnu/libpthread.so.0",
    "drwxr-xr-x 0/0 lib64/",
    "lrwxrwxrwx 0/0 lib64/ld-linux-x86-64.so.2 -> /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
    "drwxrwxrwt 0/0 tmp/",
    ...DPKG,
  ]);
  expect(await listing(image("arm64").layers[0]!)).toEqual([
    "drwxr-xr-x 0/0 lib/",
    "drwxr-xr-x 0/0 lib/aarch64-linux-gnu/",
    "-rwxr-xr-x 0/0 lib/aarch64-linux-gnu/ld-linux-aarch64.so.1",
    "-rwxr-xr-x 0/0 lib/aarch64-linux-gnu/libc.so.6",
    "-rw-r--r-- 0/0 lib/aarch64-linux-gnu/libdl.so.2",
    "-rw-r--r-- 0/0 lib/aarch64-linux-gnu/libm.so.6",
    "-rw-r--r-- 0/0 lib/aarch64-linux-gnu/libpthread.so.0",
    "lrwxrwxrwx 0/0 lib/ld-linux-aarch64.so.1 -> aarch64-linux-gnu/ld-linux-aarch64.so.1",
    "drwxrwxrwt 0/0 tmp/",
    ...DPKG,
  ]);
}, 30_000);

const member = (layer: string, path: string): Promise<string> =>
  run(["tar", "-xzOf", layer, path]).then((r) => r.stdout);

test("status.d/libc6 is the .deb's stanza as dpkg records it installed; md5sums lists exactly the shipped files", async () => {
  for (const arch of ARCHS) {
    const layer = image(arch).layers[0]!;
    const status = await member(layer, "var/lib/dpkg/status.d/libc6");
    const labels = image(arch).config.config.Labels;
    expect(status).toStartWith("Package: libc6\nStatus: install ok installed\n");
    expect(status).toContain(`\nArchitecture: ${arch}\n`);
    expect(status).toContain(`\nVersion: ${labels["run.aicr.runtime.libc6"]}\n`);
    expect(status).toContain("\nSource: glibc\n");
    expect(status).not.toContain("Conffiles:");
    // the host's own dpkg database holds the same stanza when it runs this libc6 (plus Conffiles: it has /etc)
    const host = await readFile("/var/lib/dpkg/status", "utf8").catch(() => "");
    const stanza = host
      .split("\n\n")
      .find((b) => b.startsWith("Package: libc6\n") && b.includes(`\nArchitecture: ${arch}\n`));
    if (stanza?.includes(`\nVersion: ${labels["run.aicr.runtime.libc6"]}\n`))
      expect(status).toBe(`${stanza.replace(/^Conffiles:\n( .*\n)+/m, "").trimEnd()}\n`);
    const sums = (await member(layer, "var/lib/dpkg/status.d/libc6.md5sums")).trim().split("\n");
    const shipped = (await listing(layer))
      .filter((l) => l.startsWith("-") && l.includes(" lib/"))
      .map((l) => l.split(" ").pop());
    expect(sums.map((l) => l.split("  ")[1]).sort()).toEqual(shipped.sort());
  }
}, 30_000);

test("each top layer is /usr/local/bin/aicr (0755), byte-identical to the built binary", async () => {
  for (const arch of ARCHS) {
    const top = image(arch).layers[1]!;
    expect(await listing(top)).toEqual([
      "drwxr-xr-x 0/0 usr/",
      "drwxr-xr-x 0/0 usr/local/",
      "drwxr-xr-x 0/0 usr/local/bin/",
      "-rwxr-xr-x 0/0 usr/local/bin/aicr",
    ]);
    const members = readTar(gunzip(new Uint8Array(await readFile(top))));
    const binary = new Uint8Array(await readFile(BINARIES[arch]));
    expect(sha256(members.at(-1)!.data)).toBe(sha256(binary));
    expect(await checkBinaryNeeds(BINARIES[arch], arch)).toMatchObject({ code: 0, stderr: "" }); // what the runtime layer was declared for
  }
}, 60_000);

describe("skopeo", () => {
  beforeAll(() => {
    // npm test installs it first (scripts/prereqs.ts); a bare `bun test` says how.
    if (!HAS_SKOPEO) throw new Error("skopeo is missing: run `npm run prereqs` (installs the host packages)");
  });
  // by its tag: index.json lists the referrers (SBOMs, provenance, signatures) beside the image
  test("reads the OCI archive: the raw image index and the host platform's image", async () => {
    const raw = await run(["skopeo", "inspect", "--raw", `oci-archive:${ARCHIVE}:v${VERSION}`]);
    expect(raw.code).toBe(0);
    const index = JSON.parse(raw.stdout);
    expect(index.manifests.map((m: any) => m.digest)).toEqual(checked.images.map((i) => i.digest));
    const inspect = await run([
      "skopeo",
      "inspect",
      "--override-arch",
      HOST_ARCH,
      `oci-archive:${ARCHIVE}:v${VERSION}`,
    ]);
    expect(inspect.code).toBe(0);
    const info = JSON.parse(inspect.stdout);
    expect(info.Architecture).toBe(HOST_ARCH);
    expect(info.Labels["org.opencontainers.image.version"]).toBe(VERSION);
    expect(info.Layers).toEqual(image(HOST_ARCH).layers.map((l) => `sha256:${l.split("/").pop()}`));
  }, 60_000);

  test("reads the same file as a docker-archive (manifest.json: the amd64 image)", async () => {
    const inspect = await run(["skopeo", "inspect", `docker-archive:${ARCHIVE}`]);
    expect(inspect.code).toBe(0);
    const info = JSON.parse(inspect.stdout);
    expect(info.Architecture).toBe("amd64");
    expect(info.Layers).toEqual(image("amd64").config.rootfs.diff_ids);
  }, 60_000);
});

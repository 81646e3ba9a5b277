/**
 * npm run image end to end: reproducible bytes, an independently checked OCI layout with exactly
 * the expected files, and skopeo reads both archive forms. (image-run.test.ts runs what it holds.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ARCHS, aicrImage, aicrLayout, binaryLayer } from "../../src/image/_aicr-image.ts";
import { gunzip, layerFromBlob } from "../../src/image/_layer.ts";
import { layoutArchive } from "../../src/image/_layout.ts";
import { readTar } from "../../src/image/_tar.ts";
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

test("rebuilding from the same binaries and caches gives the same archive, byte for byte", async () => {
  const all = await carried(ARCHS);
  const images = [];
  for (const c of all)
    images.push(
      aicrImage(
        c.info,
        layerFromBlob(new Uint8Array(await readFile(c.runtimeLayer))),
        binaryLayer(new Uint8Array(await readFile(BINARIES[c.arch]))),
      ),
    );
  const again = layoutArchive(
    aicrLayout(
      images,
      all.map((c) => c.info),
    ),
  );
  const archive = new Uint8Array(await readFile(ARCHIVE));
  expect(sha256(again)).toBe(sha256(archive));
  const sums = await readFile(join(DIST, "SHA256SUMS"), "utf8");
  expect(sums).toContain(`${sha256(archive).slice(7)}  aicr-image-${VERSION}.tar\n`);
}, 120_000);

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

test("the runtime layers hold the loader, libc, libm, libdl, libpthread and /tmp, nothing else", async () => {
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
  ]);
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

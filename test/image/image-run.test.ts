/**
 * What npm run image holds actually runs: the host platform's image, unpacked into an empty root and
 * chrooted into, runs `aicr --version` as root and as its User; a binary that carries its runtime
 * layer saves the same platform image (same manifest digest, same SBOM and provenance referrers),
 * and that image runs too. Needs root.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzip } from "../../src/image/_layer.ts";
import { readTar } from "../../src/image/_tar.ts";
import {
  ARCHIVE,
  BINARIES,
  type Checked,
  carried,
  chroot,
  DIST,
  ensureImage,
  extractAndCheck,
  HOST_ARCH,
  IS_ROOT,
  imageOf,
  project,
  ROOT,
  run,
  sha256,
  unpack,
  VERSION,
} from "./_image.ts";

/** `aicr --version`: the version first, then the revision, build date and Bun. */
const VERSION_LINE = new RegExp(
  `^${VERSION.replaceAll(".", "\\.")} \\(revision \\S+, built \\S+, bun \\S+\\)\\n$`,
);

const CAN_CHROOT = IS_ROOT && process.platform === "linux";

/** The digests of the referrers a layout attaches to `digest`, in index.json's order. */
const referrersOf = (c: Checked, digest: string): string[] =>
  c.referrers.filter((r) => r.manifest.subject.digest === digest).map((r) => r.descriptor.digest);

let work: string;
let checked: Checked;
const image = (arch: string) => imageOf(checked, arch);

beforeAll(async () => {
  await ensureImage();
  work = await mkdtemp(join(tmpdir(), "aicr-image-run-"));
  checked = await extractAndCheck(ARCHIVE, join(work, "layout"));
}, 180_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

const CHROOT = CAN_CHROOT ? "chroot" : "chroot (skipped: needs root on linux for unshare, mount and chroot)";
describe.skipIf(!CAN_CHROOT)(CHROOT, () => {
  test(`the ${HOST_ARCH} image runs --version in nothing but its own layers, as root and as its User`, async () => {
    const rootfs = join(work, "rootfs-npm");
    const img = image(HOST_ARCH);
    await unpack(img.layers, rootfs);
    for (const user of ["0:0", img.config.config.User]) {
      const r = await chroot(rootfs, user, ["/usr/local/bin/aicr", "--version"]);
      expect(r).toMatchObject({ code: 0, stdout: expect.stringMatching(VERSION_LINE) });
    }
  }, 60_000);

  test("a binary that carries its runtime layer saves the same platform image (same manifest digest)", async () => {
    const p = await project();
    const c = (await carried([HOST_ARCH]))[0]!;
    const harness = join(work, "harness", "aicr");
    const build = await run([
      process.execPath,
      "build",
      "--compile",
      "--asset-naming=[name].[ext]",
      join(ROOT, "test/image/_save-harness.ts"),
      ...c.files,
      "--outfile",
      harness,
    ]);
    expect(build.code).toBe(0);
    expect(build.stderr).not.toContain("error:");
    const out = join(work, "saved.tar");
    const saved = await run([harness, out, BINARIES[HOST_ARCH], p.version, p.revision, p.repository]);
    expect(saved.stderr).toBe("");
    const result = JSON.parse(saved.stdout);
    expect(result.names.sort()).toEqual(c.files.map((f) => f.split("/").pop()).sort());
    expect(result).toMatchObject({
      digest: image(HOST_ARCH).digest,
      platform: `linux/${HOST_ARCH}`,
      path: out,
    });
    // the same SBOM and provenance referrers npm run image attached to this platform's manifest
    const npmReferrers = referrersOf(checked, image(HOST_ARCH).digest);
    expect(result.referrers.map((r: { digest: string }) => r.digest)).toEqual(npmReferrers);

    const single = await extractAndCheck(out, join(work, "saved"));
    expect(single.images.map((i) => i.digest)).toEqual([image(HOST_ARCH).digest]);
    expect(single.referrers.map((r) => r.descriptor.digest)).toEqual(npmReferrers);
    await unpack(single.images[0]!.layers, join(work, "rootfs-saved"));
    const r = await chroot(join(work, "rootfs-saved"), "65534:65534", ["/usr/local/bin/aicr", "--version"]);
    expect(r).toMatchObject({ code: 0, stdout: expect.stringMatching(VERSION_LINE) });
  }, 120_000);

  test("dist/aicr image save -o writes an image that runs, never overwriting", async () => {
    const aicr = join(DIST, "aicr");
    const out = join(work, "cli-saved.tar");
    const saved = await run([aicr, "image", "save", "-o", out]);
    expect(saved.code).toBe(0);
    const digest = saved.stdout.trim();
    expect(saved.stderr).toContain(digest);
    const single = await extractAndCheck(out, join(work, "cli-saved"));
    expect(single.images.map((i) => i.digest)).toEqual([digest]);
    const [runtime, top] = single.images[0]!.layers;
    expect(runtime!.split("/").pop()).toBe(image(HOST_ARCH).layers[0]!.split("/").pop()); // the carried layer
    const members = readTar(gunzip(new Uint8Array(await readFile(top!))));
    const binary = new Uint8Array(await readFile(aicr));
    expect(sha256(members.at(-1)!.data)).toBe(sha256(binary));
    // dist/aicr is byte-identical to dist/aicr-linux-x64 when both come from one checkout (scripts/build.ts)
    // its SBOM and provenance describe this manifest
    expect(single.referrers.map((r) => [r.descriptor.artifactType, r.manifest.subject.digest])).toEqual([
      ["application/spdx+json", digest],
      ["application/vnd.in-toto+json", digest],
    ]);
    if (sha256(binary) === sha256(new Uint8Array(await readFile(BINARIES[HOST_ARCH])))) {
      expect(digest).toBe(image(HOST_ARCH).digest);
      expect(single.referrers.map((r) => r.descriptor.digest)).toEqual(referrersOf(checked, digest));
    }
    await unpack(single.images[0]!.layers, join(work, "rootfs-cli"));
    const r = await chroot(join(work, "rootfs-cli"), "65534:65534", ["/usr/local/bin/aicr", "--version"]);
    expect(r).toMatchObject({ code: 0, stdout: expect.stringMatching(VERSION_LINE) });

    const again = await run([aicr, "image", "save", "-o", out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("already exists");
    expect(existsSync(out)).toBe(true);
  }, 120_000);
});

/**
 * aicr image verify over archives built in-process (the image, its SBOM and provenance, signed by
 * signArchive): a good archive passes every check; a tampered layer, a swapped SBOM (unsigned, or
 * signed by another key), signatures by another key, a missing provenance, an SBOM or statement about
 * another manifest — each fails with a reason naming the digest and what failed (UNAUTHORIZED, 4).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { createLogger } from "../../src/core/log.ts";
import { readOciArchive } from "../../src/image/_archive.ts";
import { appendReferrers, layoutArchive } from "../../src/image/_layout.ts";
import { readTar } from "../../src/image/_tar.ts";
import { signArchive } from "../../src/image/sign/sign-archive.ts";
import { resolveVerifyInputs } from "../../src/image/verify/options.ts";
import { renderText, type VerifyReport, verificationFailed } from "../../src/image/verify/report.ts";
import { verifyImage } from "../../src/image/verify/verify.ts";
import { newKey, provenanceFor, sbomFor, type TestImage, testImage, writeFiles } from "./_verify-fixtures.ts";

const key = newKey();
const other = newKey();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const HEX = /^sha256:[a-f0-9]{64}$/;

async function verify(archive: Uint8Array, pub = key.pub): Promise<VerifyReport> {
  const files = writeFiles({ "image.tar": archive, "key.pub": pub });
  dirs.push(files.dir);
  const inputs = await resolveVerifyInputs(
    { image: files["image.tar"], key: files["key.pub"] },
    async () => "",
  );
  return verifyImage({
    inputs,
    signal: new AbortController().signal,
    log: createLogger({ write: () => {} }),
  });
}

const signed = (image: TestImage, k = key) => signArchive(image.archive, k.signing).bytes;
const failures = (r: VerifyReport) => r.checks.filter((c) => !c.ok);
const only = (r: VerifyReport) => {
  const f = failures(r);
  expect(f).toHaveLength(1);
  return f[0]!;
};

describe("a signed archive with its SBOMs and provenance", () => {
  const image = testImage();
  const amd = image.manifests.amd64!.digest;
  const arm = image.manifests.arm64!.digest;

  test("passes every check: the index's signature; each platform's blobs, signature, SBOM, provenance", async () => {
    const r = await verify(signed(image));
    expect(r.ok).toBe(true);
    expect(r.digest).toBe(image.root);
    expect(r.key.fingerprint).toMatch(HEX);
    expect(r.checks.map((c) => [c.kind, c.subject, c.platform, c.check, c.ok])).toEqual([
      ["index", image.root, undefined, "signature", true],
      ["manifest", amd, "linux/amd64", "blobs", true],
      ["manifest", amd, "linux/amd64", "signature", true],
      ["manifest", amd, "linux/amd64", "sbom", true],
      ["manifest", amd, "linux/amd64", "provenance", true],
      ["manifest", arm, "linux/arm64", "blobs", true],
      ["manifest", arm, "linux/arm64", "signature", true],
      ["manifest", arm, "linux/arm64", "sbom", true],
      ["manifest", arm, "linux/arm64", "provenance", true],
    ]);
    // the SBOM and provenance name their referrer; a signature names the signature manifest
    const oci = readOciArchive(signed(image));
    const sbom = oci.referrersOf(amd).find((x) => x.descriptor.artifactType === "application/spdx+json");
    expect(r.checks.find((c) => c.subject === amd && c.check === "sbom")?.referrer).toBe(
      sbom?.descriptor.digest,
    );
    for (const c of r.checks.filter((x) => x.check === "signature")) expect(c.referrer).toMatch(HEX);
  });

  test("the text report: one line per check with kind, platform, digest, check and key; then the summary", async () => {
    const r = await verify(signed(image));
    const lines = renderText(r).trimEnd().split("\n");
    expect(lines).toHaveLength(10);
    expect(lines[0]).toMatch(
      new RegExp(`^OK +index +- +${image.root} +signature +signed by key ${r.key.fingerprint}$`),
    );
    expect(lines[3]).toMatch(
      new RegExp(
        `^OK +manifest +linux/amd64 +${amd} +sbom +SBOM sha256:[a-f0-9]{64} names this manifest, signed by key`,
      ),
    );
    expect(lines[9]).toBe(
      `Verified ${r.reference} (${image.root}) with key ${r.key.fingerprint}: all 9 checks passed`,
    );
  });

  test("an image save archive (one manifest, named directly): its four checks", async () => {
    const one = testImage({ platforms: 1 });
    const r = await verify(signed(one));
    expect(r.ok).toBe(true);
    expect(r.digest).toBe(one.root);
    expect(r.checks.map((c) => `${c.kind} ${c.platform} ${c.check}`)).toEqual([
      "manifest linux/amd64 blobs",
      "manifest linux/amd64 signature",
      "manifest linux/amd64 sbom",
      "manifest linux/amd64 provenance",
    ]);
  });
});

describe("refused: UNAUTHORIZED (exit 4) with the reason", () => {
  test("a tampered layer: the layer's digest and the one its bytes have", async () => {
    const image = testImage();
    const good = signed(image);
    const layer = readOciArchive(good).images[0]!.manifest.layers[1]!.digest;
    const files = readTar(good).flatMap((m) => (m.type === "file" ? [{ path: m.path, data: m.data }] : []));
    const target = files.find((f) => f.path === `blobs/sha256/${layer.slice(7)}`)!;
    target.data = Uint8Array.from(target.data);
    target.data[100] = target.data[100]! ^ 0xff;
    const r = await verify(layoutArchive({ files }));
    expect(r.ok).toBe(false);
    expect(r.digest).toBe(image.root);
    const f = only(r);
    expect(f).toMatchObject({ subject: image.root, kind: "index", check: "blobs" });
    expect(f.reason).toMatch(new RegExp(`^layer ${layer} has digest sha256:[a-f0-9]{64}$`));
    const err = verificationFailed(r);
    expect(err.code).toBe("UNAUTHORIZED");
    expect(err.exitCode).toBe(4);
    expect(err.message).toBe(`${r.reference} did not verify: ${f.reason}`);
  });

  test("a swapped SBOM, unsigned: the SBOM attached to that manifest is not signed by this key", async () => {
    const image = testImage({ without: { amd64: ["sbom"] } });
    const amd = image.manifests.amd64!;
    const swapped = appendReferrers(signed(image), [sbomFor(amd, "amd64")]);
    const r = await verify(swapped);
    const f = only(r);
    expect(f).toMatchObject({ subject: amd.digest, platform: "linux/amd64", check: "sbom" });
    expect(f.reason).toStartWith(
      `the SBOM attached to ${amd.digest} is not signed by this key: no signature by this key for sha256:`,
    );
    expect(f.reason).toEndWith("(it has no signature)");
  });

  test("a swapped SBOM signed by another key: refused the same way, the other key named as such", async () => {
    const image = testImage({ without: { amd64: ["sbom"] } });
    const amd = image.manifests.amd64!;
    const swapped = signArchive(appendReferrers(signed(image), [sbomFor(amd, "amd64")]), other.signing).bytes;
    const f = only(await verify(swapped));
    expect(f.check).toBe("sbom");
    expect(f.reason).toStartWith(`the SBOM attached to ${amd.digest} is not signed by this key`);
    expect(f.reason).toEndWith("(one signature, by another key)");
  });

  test("signed by another key: every signature, SBOM and provenance check fails", async () => {
    const image = testImage();
    const r = await verify(signed(image, other));
    const f = failures(r);
    expect(f.map((c) => c.check)).toEqual([
      "signature",
      "signature",
      "sbom",
      "provenance",
      "signature",
      "sbom",
      "provenance",
    ]);
    expect(f[0]!.reason).toBe(`no signature by this key for ${image.root} (one signature, by another key)`);
    // verified with the other key, the same archive passes
    expect((await verify(signed(image, other), other.pub)).ok).toBe(true);
  });

  test("not signed at all", async () => {
    const image = testImage({ platforms: 1 });
    const f = failures(await verify(image.archive));
    expect(f.map((c) => c.check)).toEqual(["signature", "sbom", "provenance"]);
    expect(f[0]!.reason).toBe(`no signature by this key for ${image.root} (it has no signature)`);
  });

  test("a missing provenance", async () => {
    const image = testImage({ without: { arm64: ["provenance"] } });
    const f = only(await verify(signed(image)));
    const arm = image.manifests.arm64!.digest;
    expect(f).toMatchObject({ subject: arm, check: "provenance", platform: "linux/arm64" });
    expect(f.reason).toBe(`no provenance is attached to ${arm}`);
  });

  test("a signed SBOM naming another manifest; a signed statement about another manifest", async () => {
    const image = testImage({
      without: { arm64: ["sbom", "provenance"] },
      extra: (m) => [sbomFor(m.arm64!, "arm64", m.amd64!.digest), provenanceFor(m.arm64!, m.amd64!.digest)],
    });
    const amd = image.manifests.amd64!.digest;
    const arm = image.manifests.arm64!.digest;
    const f = failures(await verify(signed(image)));
    expect(f.map((c) => [c.subject, c.check])).toEqual([
      [arm, "sbom"],
      [arm, "provenance"],
    ]);
    expect(f[0]!.reason).toBe(
      `the SBOM ${f[0]!.referrer} attached to ${arm} names ${amd} in its image package, not ${arm}`,
    );
    expect(f[1]!.reason).toBe(
      `the provenance ${f[1]!.referrer} attached to ${arm} is about ${amd}, not ${arm}`,
    );
  });

  test("a statement that is not SLSA provenance", async () => {
    const image = testImage({
      platforms: 1,
      without: { amd64: ["provenance"] },
      extra: (m) => [provenanceFor(m.amd64!, m.amd64!.digest, "https://example.invalid/other")],
    });
    const f = only(await verify(signed(image)));
    expect(f.reason).toEndWith(
      `has predicate type "https://example.invalid/other", not https://slsa.dev/provenance/v1`,
    );
  });

  test("a good SBOM beside an unsigned one: the signed one counts", async () => {
    const image = testImage({ platforms: 1 });
    const amd = image.manifests.amd64!;
    const r = await verify(
      appendReferrers(signed(image), [sbomFor(amd, "amd64", "sha256:".padEnd(71, "0"))]),
    );
    expect(r.ok).toBe(true);
  });
});

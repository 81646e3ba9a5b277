import { expect, test } from "bun:test";
import { generateKeyPairSync, sign } from "node:crypto";
import { aicrLayout } from "../../src/image/_aicr-image.ts";
import { ArchiveError, readOciArchive } from "../../src/image/_archive.ts";
import { appendReferrers, layoutArchive } from "../../src/image/_layout.ts";
import { canonicalJson, type Descriptor, type Index } from "../../src/image/_oci.ts";
import { ARTIFACT, buildArtifact, COSIGN_SIGNATURE_ANNOTATION } from "../../src/image/_referrers.ts";
import { readTar } from "../../src/image/_tar.ts";
import { loadSigningKey, verifySignature } from "../../src/image/sign/_keys.ts";
import { buildPayload, parsePayload } from "../../src/image/sign/_payload.ts";
import { signatureLayers } from "../../src/image/sign/_signature.ts";
import { signArchive } from "../../src/image/sign/sign-archive.ts";
import { fakeImage, fakeProvenance as provenanceOf, fakeSbom as sbomOf } from "./_fixtures.ts";

const REPOSITORY = "registry.example/team/aicr";
const enc = (text: string): Uint8Array => new TextEncoder().encode(text);

function newKey() {
  const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const pem = pair.privateKey.export({ format: "pem", type: "pkcs8" }) as string;
  return { pair, key: loadSigningKey(pem, { flag: "--key", path: "k.pem" }) };
}
const { pair, key } = newKey();

/** What npm run image writes: an index of two platforms, an SBOM and provenance of each. */
function multiArch(): { archive: Uint8Array; index: string; amd: string; arm: string } {
  const amd = fakeImage("amd64");
  const arm = fakeImage("arm64");
  const referrers = [amd, arm].flatMap(({ image, info }) => [
    sbomOf(image.descriptor, `${info.arch}.spdx.json`),
    provenanceOf(image.descriptor),
  ]);
  const layout = aicrLayout([amd.image, arm.image], [amd.info, arm.info], referrers);
  return {
    archive: layoutArchive(layout),
    index: layout.digest,
    amd: amd.image.descriptor.digest,
    arm: arm.image.descriptor.digest,
  };
}

/** Every signature in the archive: its subject, the payload's claim, and whether `pub` verifies it. */
function signaturesIn(archive: Uint8Array, pub = key.verification) {
  const oci = readOciArchive(archive);
  return oci.referrers
    .filter((r) => r.descriptor.artifactType === ARTIFACT.cosignSignature)
    .flatMap((r) =>
      signatureLayers(r, oci.blob).map((l) => ({
        subject: r.manifest.subject?.digest,
        claim: parsePayload(l.payload),
        valid: verifySignature(l.payload, l.signature, pub),
      })),
    );
}

test("signs the index, each platform manifest and each SBOM and provenance, every payload naming its subject", () => {
  const { archive, index, amd, arm } = multiArch();
  const result = signArchive(archive, key);
  expect(result.repository).toBe(REPOSITORY);
  expect(result.added).toBe(7);
  expect(result.signed.slice(0, 3)).toEqual([
    { digest: index, kind: "index", added: true },
    { digest: amd, kind: "manifest", platform: "linux/amd64", added: true },
    { digest: arm, kind: "manifest", platform: "linux/arm64", added: true },
  ]);
  const described = result.signed.slice(3).map((s) => [s.kind, s.describes]);
  expect(described.sort()).toEqual(
    [
      ["provenance", amd],
      ["provenance", arm],
      ["sbom", amd],
      ["sbom", arm],
    ].sort(),
  );
  const sigs = signaturesIn(result.bytes);
  expect(sigs).toHaveLength(7);
  for (const s of sigs) {
    expect(s.valid).toBe(true);
    expect(s.claim).toEqual({
      ok: true,
      claim: { dockerReference: REPOSITORY, digest: s.subject as string },
    });
  }
  expect(new Set(sigs.map((s) => s.subject))).toEqual(new Set(result.signed.map((s) => s.digest)));
  // the signature layer carries exactly cosign's payload and base64 DER
  const oci = readOciArchive(result.bytes);
  const [sigOfIndex] = oci
    .referrersOf(index)
    .filter((r) => r.descriptor.artifactType === ARTIFACT.cosignSignature);
  const layer = sigOfIndex?.manifest.layers[0];
  expect(layer?.mediaType).toBe(ARTIFACT.simpleSigning);
  expect(Buffer.from(oci.blob(layer?.digest ?? "") ?? []).toString()).toBe(
    Buffer.from(buildPayload(REPOSITORY, index)).toString(),
  );
  const b64 = layer?.annotations?.[COSIGN_SIGNATURE_ANNOTATION] ?? "";
  expect(verifySignature(buildPayload(REPOSITORY, index), b64, pair.publicKey)).toBe(true);
});

test("deterministic and idempotent: the same archive signed twice, or the signed one again, gives the same bytes", () => {
  const { archive } = multiArch();
  const once = signArchive(archive, key);
  expect(Buffer.from(signArchive(archive, key).bytes).equals(Buffer.from(once.bytes))).toBe(true);
  const again = signArchive(once.bytes, key);
  expect(again.added).toBe(0);
  expect(again.bytes).toBe(once.bytes);
  expect(again.signed.every((s) => !s.added)).toBe(true);
  expect(again.signed.map((s) => s.digest)).toEqual(once.signed.map((s) => s.digest));
});

test("a signature by the same key over the same payload with other bytes (random nonce) counts as present", () => {
  const { archive, index } = multiArch();
  const oci = readOciArchive(archive);
  const root = oci.roots[0] as Descriptor;
  const payload = buildPayload(REPOSITORY, index);
  const foreign = buildArtifact({
    artifactType: ARTIFACT.cosignSignature,
    subject: root,
    layers: [
      {
        mediaType: ARTIFACT.simpleSigning,
        data: payload,
        annotations: {
          [COSIGN_SIGNATURE_ANNOTATION]: sign("sha256", payload, {
            key: pair.privateKey,
            dsaEncoding: "der",
          }).toString("base64"),
        },
      },
    ],
  });
  const result = signArchive(appendReferrers(archive, [foreign]), key);
  expect(result.added).toBe(6);
  expect(result.signed[0]).toEqual({ digest: index, kind: "index", added: false });
  // a signature over the same payload that does not verify with the key does not count
  const forged = buildArtifact({
    artifactType: ARTIFACT.cosignSignature,
    subject: root,
    layers: [
      {
        mediaType: ARTIFACT.simpleSigning,
        data: payload,
        annotations: { [COSIGN_SIGNATURE_ANNOTATION]: "MEUCIQ==" },
      },
    ],
  });
  expect(signArchive(appendReferrers(archive, [forged]), key).added).toBe(7);
});

test("a second key adds its own signatures beside the first's; signature referrers are never signed", () => {
  const { archive } = multiArch();
  const first = signArchive(archive, key);
  const other = newKey();
  const second = signArchive(first.bytes, other.key);
  expect(second.added).toBe(7);
  expect(second.signed.map((s) => s.digest)).toEqual(first.signed.map((s) => s.digest));
  const sigs = signaturesIn(second.bytes, other.key.verification);
  expect(sigs).toHaveLength(14);
  expect(sigs.filter((s) => s.valid)).toHaveLength(7);
  expect(signaturesIn(second.bytes).filter((s) => s.valid)).toHaveLength(7);
});

test("an image save archive (one manifest, no index): its manifest is the root signed", () => {
  const amd = fakeImage("amd64");
  const layout = aicrLayout([amd.image], [amd.info]);
  const result = signArchive(layoutArchive(layout), key);
  expect(result.signed).toEqual([
    { digest: layout.digest, kind: "manifest", platform: "linux/amd64", added: true },
  ]);
  expect(signaturesIn(result.bytes)).toEqual([
    {
      subject: layout.digest,
      claim: { ok: true, claim: { dockerReference: REPOSITORY, digest: layout.digest } },
      valid: true,
    },
  ]);
});

/** The archive with index.json's root annotations replaced. */
function withRootAnnotations(
  archive: Uint8Array,
  annotations: Record<string, string> | undefined,
): Uint8Array {
  const files = readTar(archive).flatMap((e) => (e.type === "file" ? [{ path: e.path, data: e.data }] : []));
  const at = files.findIndex((f) => f.path === "index.json");
  const index = JSON.parse(new TextDecoder().decode(files[at]?.data)) as Index;
  const [root, ...rest] = index.manifests;
  const { annotations: _, ...plain } = root as Descriptor;
  files[at] = {
    path: "index.json",
    data: canonicalJson({
      ...index,
      manifests: [{ ...plain, ...(annotations ? { annotations } : {}) }, ...rest],
    }),
  };
  return layoutArchive({ files });
}

test("the repository comes from io.containerd.image.name; without it (or unparsable) nothing is signed", () => {
  const { archive } = multiArch();
  const named = (name: string) => withRootAnnotations(archive, { "io.containerd.image.name": name });
  expect(signArchive(named("localhost:5000/aicr:v9"), key).repository).toBe("localhost:5000/aicr");
  expect(signArchive(named("aicr:v9"), key).repository).toBe("index.docker.io/library/aicr");
  expect(() => signArchive(withRootAnnotations(archive, undefined), key)).toThrow(
    "no io.containerd.image.name annotation",
  );
  expect(() => signArchive(named("UPPER/Case:v1"), key)).toThrow("is not an image reference");
});

test("an archive that does not read is refused before anything is signed", () => {
  expect(() => signArchive(enc("not a tar"), key)).toThrow(ArchiveError);
  expect(() => signArchive(new Uint8Array(1024).fill(7), key)).toThrow("not a tar archive");
});

/**
 * aicr image sign through the compiled binary: an archive like npm run image's (an index of two
 * platforms, an SBOM and provenance of each) signed in place with a PEM key and with cosign's
 * encrypted key file (password by --password-stdin, $AICR_SIGNING_KEY_PASSWORD, $COSIGN_PASSWORD);
 * the signatures verify, a second run adds nothing and leaves the file alone, two copies signed give
 * the same bytes; every refusal (exit 2) leaves the archive as it was and no temp file behind, and no
 * message carries a password or a byte of a key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { aicrLayout } from "../../src/image/_aicr-image.ts";
import { readOciArchive } from "../../src/image/_archive.ts";
import { layoutArchive } from "../../src/image/_layout.ts";
import { ARTIFACT, buildArtifact, PREDICATE_TYPE_ANNOTATION } from "../../src/image/_referrers.ts";
import { loadVerificationKey, verifySignature } from "../../src/image/sign/_keys.ts";
import { parsePayload } from "../../src/image/sign/_payload.ts";
import { signatureLayers } from "../../src/image/sign/_signature.ts";
import { fakeImage } from "../image/_fixtures.ts";
import { SIGSTORE_KEY, SIGSTORE_KEY_PASSWORD, SIGSTORE_KEY_PUB } from "../image/_sign-fixtures.ts";
import { aicr, baseEnv, ensureBuilt } from "./_aicr.ts";

const REPOSITORY = "registry.example/team/aicr";
const enc = (s: string) => new TextEncoder().encode(s);
const sha = (path: string) => new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");

function archiveBytes(): Uint8Array {
  const amd = fakeImage("amd64");
  const arm = fakeImage("arm64");
  const referrers = [amd, arm].flatMap(({ image, info }) => [
    buildArtifact({
      artifactType: ARTIFACT.spdx,
      subject: image.descriptor,
      layers: [{ mediaType: ARTIFACT.spdx, data: enc(`{"name":"${info.arch}"}\n`) }],
    }),
    buildArtifact({
      artifactType: ARTIFACT.intoto,
      subject: image.descriptor,
      layers: [{ mediaType: ARTIFACT.intoto, data: enc(`{"subject":"${image.descriptor.digest}"}\n`) }],
      annotations: { [PREDICATE_TYPE_ANNOTATION]: "https://slsa.dev/provenance/v1" },
    }),
  ]);
  return layoutArchive(aicrLayout([amd.image, arm.image], [amd.info, arm.info], referrers));
}

/** Each signature of the archive: its subject, whether `pub` verifies it, the payload's digest claim. */
function signatures(path: string, pubPem: string) {
  const pub = loadVerificationKey(pubPem, { flag: "--key", path: "pub" });
  const oci = readOciArchive(new Uint8Array(readFileSync(path)));
  return oci.referrers
    .filter((r) => r.descriptor.artifactType === ARTIFACT.cosignSignature)
    .flatMap((r) =>
      signatureLayers(r, oci.blob).map((l) => {
        const claim = parsePayload(l.payload);
        return {
          subject: r.manifest.subject?.digest,
          valid: verifySignature(l.payload, l.signature, pub),
          claim: claim.ok ? claim.claim : undefined,
        };
      }),
    );
}

describe("aicr image sign (compiled binary)", () => {
  let dir: string;
  let pemKey: string;
  let pemPub: string;
  let pemText: string;
  let original: Uint8Array;
  let n = 0;
  /** A fresh copy of the unsigned archive (mode 0640). */
  const freshArchive = (): string => {
    const path = join(dir, `a${++n}.tar`);
    writeFileSync(path, original);
    chmodSync(path, 0o640);
    return path;
  };
  const noTempLeft = () => expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);

  beforeAll(async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), "aicr-sign-e2e-"));
    const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
    pemText = pair.privateKey.export({ format: "pem", type: "sec1" }) as string;
    pemPub = pair.publicKey.export({ format: "pem", type: "spki" }) as string;
    pemKey = join(dir, "ec.pem");
    writeFileSync(pemKey, pemText, { mode: 0o600 });
    writeFileSync(join(dir, "ec.pub"), pemPub);
    writeFileSync(join(dir, "cosign.key"), SIGSTORE_KEY, { mode: 0o600 });
    original = archiveBytes();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("signs the index, both platform manifests, both SBOMs and both provenance; a second run changes nothing", async () => {
    const archive = freshArchive();
    const first = await aicr(["image", "sign", archive, "--key", pemKey]);
    expect(first.stderr).toContain("7 signatures added");
    expect(first.code).toBe(0);
    const lines = first.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^key sha256:[0-9a-f]{64}$/);
    expect(lines[1]).toBe(`repository ${REPOSITORY}`);
    expect(lines.slice(2).map((l) => l.split(/\s+/).slice(0, 2).join(" "))).toEqual([
      "signed index",
      "signed manifest",
      "signed manifest",
      ...Array(4).fill(expect.stringMatching(/^signed (sbom|provenance)$/)),
    ]);
    expect(lines[3]).toEndWith("linux/amd64");
    const sigs = signatures(archive, pemPub);
    expect(sigs).toHaveLength(7);
    for (const s of sigs) {
      expect(s.valid).toBe(true);
      expect(s.claim).toEqual({ dockerReference: REPOSITORY, digest: s.subject as string });
    }
    expect(statSync(archive).mode & 0o777).toBe(0o640);
    noTempLeft();

    const digest = sha(archive);
    const mtime = statSync(archive).mtimeMs;
    const again = await aicr(["image", "sign", archive, "--key", pemKey]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("already carries this key's signature on all 7; left unchanged");
    expect(again.stdout.split("\n").filter((l) => l.startsWith("already signed"))).toHaveLength(7);
    expect(sha(archive)).toBe(digest);
    expect(statSync(archive).mtimeMs).toBe(mtime);
  });

  test("deterministic: two copies signed with the same key are the same bytes; $AICR_SIGNING_KEY is the default key", async () => {
    const a = freshArchive();
    const b = freshArchive();
    expect((await aicr(["image", "sign", a, "--key", pemKey])).code).toBe(0);
    const viaEnv = await aicr(["image", "sign", b], { env: baseEnv({ AICR_SIGNING_KEY: pemKey }) });
    expect(viaEnv.code).toBe(0);
    expect(sha(a)).toBe(sha(b));
  });

  test("-o json: the repository, the key's fingerprint and every subject", async () => {
    const archive = freshArchive();
    const r = await aicr(["image", "sign", archive, "--key", pemKey, "-o", "json"]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ archive, repository: REPOSITORY, added: 7 });
    expect(doc.key).toBe(loadVerificationKey(pemPub, { flag: "k", path: "k" }).fingerprint);
    expect(doc.signed.map((s: { kind: string }) => s.kind).sort()).toEqual(
      ["index", "manifest", "manifest", "provenance", "provenance", "sbom", "sbom"].sort(),
    );
  });

  test("cosign's encrypted key file: password by --password-stdin, $AICR_SIGNING_KEY_PASSWORD before $COSIGN_PASSWORD", async () => {
    const key = join(dir, "cosign.key");
    const viaStdin = freshArchive();
    const r = await aicr(["image", "sign", viaStdin, "--key", key, "--password-stdin"], {
      stdin: `${SIGSTORE_KEY_PASSWORD}\n`,
    });
    expect(r.code).toBe(0);
    expect(signatures(viaStdin, SIGSTORE_KEY_PUB).every((s) => s.valid)).toBe(true);

    const viaEnv = freshArchive();
    const env = baseEnv({ AICR_SIGNING_KEY_PASSWORD: SIGSTORE_KEY_PASSWORD, COSIGN_PASSWORD: "not it" });
    expect((await aicr(["image", "sign", viaEnv, "--key", key], { env })).code).toBe(0);
    expect(sha(viaEnv)).toBe(sha(viaStdin));

    const viaCosign = freshArchive();
    const cosignEnv = baseEnv({ COSIGN_PASSWORD: SIGSTORE_KEY_PASSWORD });
    expect((await aicr(["image", "sign", viaCosign, "--key", key], { env: cosignEnv })).code).toBe(0);
    expect(sha(viaCosign)).toBe(sha(viaStdin));
  });

  test("a wrong or missing password: exit 2, the archive untouched, the password never echoed", async () => {
    const key = join(dir, "cosign.key");
    const archive = freshArchive();
    const before = sha(archive);
    const wrong = await aicr(["image", "sign", archive, "--key", key, "--password-stdin"], {
      stdin: "Tr0ub4dor&3",
    });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("wrong password or damaged key");
    expect(wrong.stderr).not.toContain("Tr0ub4dor");
    const none = await aicr(["image", "sign", archive, "--key", key]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("needs its password");
    expect(sha(archive)).toBe(before);
    noTempLeft();
  });

  test("refusals before any write (exit 2), each naming the problem; the archive stays as it was", async () => {
    const archive = freshArchive();
    const before = sha(archive);
    const link = join(dir, "link.tar");
    symlinkSync(archive, link);
    const rsa = join(dir, "rsa.pem");
    writeFileSync(
      rsa,
      generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ format: "pem", type: "pkcs8" }),
    );
    const garbage = join(dir, "garbage.tar");
    writeFileSync(garbage, "not a tar at all");
    const subdir = join(dir, "sub.tar");
    mkdirSync(subdir);
    const cases: [string[], string, Record<string, string>?][] = [
      [
        ["image", "sign", link, "--key", pemKey],
        "a symlink; aicr image sign rewrites the archive and never writes through a link",
      ],
      [["image", "sign", subdir, "--key", pemKey], "a directory, not a regular file"],
      [["image", "sign", join(dir, "absent.tar"), "--key", pemKey], "no such file"],
      [["image", "sign", garbage, "--key", pemKey], "is not a valid OCI archive"],
      [["image", "sign", archive], "Missing the signing key"],
      [["image", "sign", "--key", pemKey], "Missing required positional argument: ARCHIVE"],
      [
        ["image", "sign", archive, "--key", join(dir, "ec.pub")],
        "a public key, where a private key is needed",
      ],
      [["image", "sign", archive, "--key", rsa], "an RSA key (1024 bits); aicr signs with ECDSA P-256"],
      [["image", "sign", archive, "--key", join(dir, "absent.pem")], "no such file"],
      [["image", "sign", archive, "--key", pemKey, "--password-stdin"], "is not an encrypted key"],
      [["image", "sign", archive], "AICR_SIGNING_KEY", { AICR_SIGNING_KEY: join(dir, "ec.pub") }],
    ];
    for (const [args, problem, env] of cases) {
      const r = await aicr(args, { env: baseEnv(env), stdin: "" });
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 2]);
      expect(r.stderr).toContain(problem);
      for (const line of pemText.split("\n").filter((l) => l && !l.startsWith("-----")))
        expect(r.stderr).not.toContain(line.slice(0, 20));
    }
    expect(sha(archive)).toBe(before);
    noTempLeft();
  });

  test("signing a copy of a signed archive with a second key keeps the first key's signatures", async () => {
    const archive = freshArchive();
    expect((await aicr(["image", "sign", archive, "--key", pemKey])).code).toBe(0);
    const copy = join(dir, "copy.tar");
    copyFileSync(archive, copy);
    const r = await aicr(["image", "sign", copy, "--key", join(dir, "cosign.key")], {
      env: baseEnv({ COSIGN_PASSWORD: SIGSTORE_KEY_PASSWORD }),
    });
    expect(r.code).toBe(0);
    expect(signatures(copy, pemPub).filter((s) => s.valid)).toHaveLength(7);
    expect(signatures(copy, SIGSTORE_KEY_PUB).filter((s) => s.valid)).toHaveLength(7);
  });
});

// cosign's own verdict on these signatures (legacy .sig tag and OCI 1.1 referrers, offline): supply-chain-cosign.test.ts

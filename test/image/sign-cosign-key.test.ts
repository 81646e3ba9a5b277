import { expect, test } from "bun:test";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { scryptKey } from "../../src/image/sign/_cosign-key.ts";
import {
  loadSigningKey,
  loadVerificationKey,
  pemBlocks,
  verifySignature,
} from "../../src/image/sign/_keys.ts";
import { secretboxSeal } from "../../src/image/sign/_nacl.ts";
import { thrown } from "../support/reject.ts";
import {
  COSIGN_KEY,
  COSIGN_KEY_PUB,
  SIGSTORE_KEY,
  SIGSTORE_KEY_PASSWORD,
  SIGSTORE_KEY_PUB,
} from "./_sign-fixtures.ts";

const SOURCE = { flag: "--key", path: "cosign.key" };

/** The envelope JSON of a cosign key file. */
function envelopeOf(pem: string): Record<string, unknown> {
  const blocks = pemBlocks(pem);
  if (!Array.isArray(blocks)) throw new Error(blocks.problem);
  return JSON.parse(new TextDecoder().decode(blocks[0]?.der)) as Record<string, unknown>;
}

function pemOf(envelope: unknown, label = "ENCRYPTED SIGSTORE PRIVATE KEY"): string {
  const b64 = Buffer.from(JSON.stringify(envelope)).toString("base64");
  return `-----BEGIN ${label}-----\n${b64.replace(/(.{64})/g, "$1\n")}\n-----END ${label}-----\n`;
}

/** A key file as go-securesystemslib writes it, around any DER (legacy scrypt, to keep tests quick). */
function sealKey(der: Uint8Array, password: string): string {
  const salt = randomBytes(32);
  const nonce = randomBytes(24);
  const box = secretboxSeal(der, nonce, scryptKey(password, salt, 32768));
  return pemOf({
    kdf: { name: "scrypt", params: { N: 32768, r: 8, p: 1 }, salt: salt.toString("base64") },
    cipher: { name: "nacl/secretbox", nonce: nonce.toString("base64") },
    ciphertext: Buffer.from(box).toString("base64"),
  });
}

test("cosign generate-key-pair's key file (go-securesystemslib's own output) opens with its password", () => {
  const key = loadSigningKey(SIGSTORE_KEY, SOURCE, { password: SIGSTORE_KEY_PASSWORD });
  const pub = loadVerificationKey(SIGSTORE_KEY_PUB, { flag: "--key", path: "cosign.pub" });
  expect(key.fingerprint).toBe(pub.fingerprint);
  const payload = new TextEncoder().encode("payload");
  expect(verifySignature(payload, Buffer.from(key.sign(payload)).toString("base64"), pub)).toBe(true);
});

test("the older ENCRYPTED COSIGN PRIVATE KEY label with legacy scrypt and an empty password", () => {
  const key = loadSigningKey(COSIGN_KEY, SOURCE, { password: "" });
  expect(key.fingerprint).toBe(loadVerificationKey(COSIGN_KEY_PUB, SOURCE).fingerprint);
});

test("a wrong password, or none, is refused without a byte of the key", () => {
  const wrong = thrown(() => loadSigningKey(SIGSTORE_KEY, SOURCE, { password: "correct horsE" }));
  expect(wrong.code).toBe("INVALID_REQUEST");
  expect(wrong.message).toBe('--key "cosign.key": wrong password or damaged key');
  expect(wrong.remedy).toContain("--password-stdin");
  expect(`${wrong.message}${wrong.remedy}`).not.toContain("correct horsE");
  const none = thrown(() => loadSigningKey(SIGSTORE_KEY, SOURCE));
  expect(none.message).toContain("needs its password");
  expect(none.remedy).toContain("AICR_SIGNING_KEY_PASSWORD");
});

test("a damaged ciphertext is the same refusal as a wrong password", () => {
  const env = envelopeOf(SIGSTORE_KEY);
  const ct = Buffer.from(String(env.ciphertext), "base64");
  ct[20] = (ct[20] as number) ^ 1;
  const pem = pemOf({ ...env, ciphertext: ct.toString("base64") });
  expect(thrown(() => loadSigningKey(pem, SOURCE, { password: SIGSTORE_KEY_PASSWORD })).message).toContain(
    "wrong password or damaged key",
  );
});

test("scrypt parameters other than cosign's three are refused before any work (no absurd N)", () => {
  const env = envelopeOf(SIGSTORE_KEY);
  const kdf = env.kdf as Record<string, unknown>;
  for (const params of [
    { N: 2 ** 30, r: 8, p: 1 },
    { N: 1024, r: 8, p: 1 },
    { N: 65536, r: 16, p: 1 },
    { N: 65536, r: 8, p: 64 },
    { N: "65536", r: 8, p: 1 },
  ]) {
    const err = thrown(() =>
      loadSigningKey(pemOf({ ...env, kdf: { ...kdf, params } }), SOURCE, { password: "x" }),
    );
    expect(err.message).toContain("scrypt parameters");
    expect(err.message).toContain("not one of cosign's (N=32768, 65536 or 131072; r=8; p=1)");
  }
});

test("an envelope that is not cosign's: other KDF, other cipher, bad nonce, bad base64, not JSON", () => {
  const env = envelopeOf(SIGSTORE_KEY);
  const cases: [unknown, string][] = [
    [{ ...env, kdf: { ...(env.kdf as object), name: "pbkdf2" } }, 'KDF is "pbkdf2", not "scrypt"'],
    [
      { ...env, cipher: { ...(env.cipher as object), name: "aes-gcm" } },
      'cipher is "aes-gcm", not "nacl/secretbox"',
    ],
    [{ ...env, cipher: { name: "nacl/secretbox", nonce: "AAAA" } }, "nonce has 3 bytes, not 24"],
    [{ ...env, ciphertext: "%%%" }, "ciphertext is not base64"],
    [{ ...env, kdf: undefined }, "has no kdf and cipher"],
  ];
  for (const [envelope, problem] of cases)
    expect(thrown(() => loadSigningKey(pemOf(envelope), SOURCE, { password: "x" })).message).toContain(
      problem,
    );
  const notJson =
    "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n";
  expect(thrown(() => loadSigningKey(notJson, SOURCE, { password: "x" })).message).toContain(
    "not cosign's JSON envelope",
  );
});

test("a cosign key file holding another kind of key is refused naming it", () => {
  const p384 = generateKeyPairSync("ec", { namedCurve: "secp384r1" }).privateKey.export({
    format: "der",
    type: "pkcs8",
  });
  expect(thrown(() => loadSigningKey(sealKey(p384, "pw"), SOURCE, { password: "pw" })).message).toBe(
    '--key "cosign.key": an EC key on curve secp384r1; aicr signs with ECDSA P-256 (prime256v1) keys only',
  );
  const p256 = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const der = p256.privateKey.export({ format: "der", type: "pkcs8" });
  const key = loadSigningKey(sealKey(der, "pw"), SOURCE, { password: "pw" });
  expect(key.verification.publicKey.equals(p256.publicKey)).toBe(true);
});

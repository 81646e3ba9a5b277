import { expect, test } from "bun:test";
import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import type { AicrError } from "../../src/core/errors.ts";
import {
  loadSigningKey,
  loadVerificationKey,
  pemBlocks,
  verifySignature,
} from "../../src/image/sign/_keys.ts";
import { thrown } from "../support/reject.ts";

const SOURCE = { flag: "--key", path: "/keys/k.pem" };
const p256 = generateKeyPairSync("ec", { namedCurve: "P-256" });
const sec1 = p256.privateKey.export({ format: "pem", type: "sec1" }) as string;
const pkcs8 = p256.privateKey.export({ format: "pem", type: "pkcs8" }) as string;
const spki = p256.publicKey.export({ format: "pem", type: "spki" }) as string;
const spkiDer = p256.publicKey.export({ format: "der", type: "spki" });
const fingerprint = `sha256:${createHash("sha256").update(spkiDer).digest("hex")}`;
const privateScalar = BigInt(
  `0x${Buffer.from(p256.privateKey.export({ format: "jwk" }).d ?? "", "base64url").toString("hex")}`,
);

// Throwaway test keys (openssl ecparam -name <curve> -genkey), on curves BoringSSL does not load.
const SECP256K1 = `-----BEGIN PRIVATE KEY-----
MIGEAgEAMBAGByqGSM49AgEGBSuBBAAKBG0wawIBAQQg9BLSDEqfEa57j7r+3mdH
ZNLc/DHKr3BWSN2wIubisEOhRANCAATwrFvfl+Lacgm2C6nubo+r4/fq5o7uk5fj
D/YrBkXnmB9Pcxcv9wFXfV+EzZV5cZRZlEGSGvS9EcEbntKpmsgj
-----END PRIVATE KEY-----
`;
const BRAINPOOL = `-----BEGIN EC PRIVATE KEY-----
MHgCAQEEIIcdtLyIDx8lGj1lzK2sMkl5wiIJN7Z+joYt3pTGM7jzoAsGCSskAwMC
CAEBB6FEA0IABG1Aa3QxSM8FtQobNEylco3u7n1RhG4ANjsskZNapX+HSCx4emS+
9LnGUNb6i1jgSmCnAQCp9v3+mF6FPpj7RcY=
-----END EC PRIVATE KEY-----
`;

/** The AicrError a call throws (fails the test when none). */
/** No message may carry a line of the key's PEM body. */
function expectNoKeyBytes(err: AicrError, pem: string): void {
  const all = `${err.message} ${err.remedy ?? ""} ${JSON.stringify(err.context)}`;
  for (const line of pem.split("\n").filter((l) => l && !l.startsWith("-----")))
    expect(all).not.toContain(line.slice(0, 16));
}

test("a P-256 key as SEC1 and as PKCS#8 loads to the same scalar and fingerprint", () => {
  for (const pem of [sec1, pkcs8]) {
    const key = loadSigningKey(pem, SOURCE);
    expect(key.scalar).toBe(privateScalar);
    expect(key.fingerprint).toBe(fingerprint);
    expect(Buffer.from(key.verification.spki).equals(spkiDer)).toBe(true);
  }
});

test("the scalar never shows when the key is logged or serialised", () => {
  const key = loadSigningKey(sec1, SOURCE);
  expect(JSON.stringify(key)).toBe(JSON.stringify({ fingerprint }));
  expect(Bun.inspect(key)).not.toContain(privateScalar.toString());
  expect(Bun.inspect(key)).not.toContain(privateScalar.toString(16));
});

test("openssl ecparam -genkey's EC PARAMETERS block beside the key is skipped; CRLF line ends read", () => {
  const params = "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n";
  expect(loadSigningKey(params + sec1, SOURCE).fingerprint).toBe(fingerprint);
  expect(loadSigningKey(sec1.replaceAll("\n", "\r\n"), SOURCE).fingerprint).toBe(fingerprint);
});

test("other curves, RSA and Ed25519 are refused naming what was found and the form expected", () => {
  const cases: [KeyObject, string][] = [
    [generateKeyPairSync("ec", { namedCurve: "secp384r1" }).privateKey, "an EC key on curve secp384r1"],
    [generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey, "an RSA key (1024 bits)"],
    [generateKeyPairSync("ed25519").privateKey, "an Ed25519 key"],
  ];
  for (const [key, found] of cases) {
    const pem = key.export({ format: "pem", type: "pkcs8" }) as string;
    const err = thrown(() => loadSigningKey(pem, SOURCE));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toBe(
      `--key "/keys/k.pem": ${found}; aicr signs with ECDSA P-256 (prime256v1) keys only`,
    );
    expect(err.remedy).toContain("prime256v1");
    expectNoKeyBytes(err, pem);
  }
  // Curves Bun's crypto cannot load at all are still named (keys made by openssl ecparam -genkey).
  for (const [pem, curve] of [
    [SECP256K1, "secp256k1"],
    [BRAINPOOL, "brainpoolP256r1"],
  ] as const)
    expect(thrown(() => loadSigningKey(pem, SOURCE)).message).toBe(
      `--key "/keys/k.pem": an EC key on curve ${curve}; aicr signs with ECDSA P-256 (prime256v1) keys only`,
    );
  const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({
    format: "pem",
    type: "pkcs1",
  });
  expect(thrown(() => loadSigningKey(rsa as string, SOURCE)).message).toContain(
    "an RSA private key (PKCS#1)",
  );
});

test("the wrong kind of PEM for signing: a public key, an encrypted PKCS#8 or OpenSSL key, a certificate, no block", () => {
  expect(thrown(() => loadSigningKey(spki, SOURCE)).remedy).toContain("aicr image verify --key");
  const enc = p256.privateKey.export({
    format: "pem",
    type: "pkcs8",
    cipher: "aes-256-cbc",
    passphrase: "pw",
  });
  expect(thrown(() => loadSigningKey(enc as string, SOURCE)).message).toContain("ENCRYPTED PRIVATE KEY");
  const legacy = p256.privateKey.export({
    format: "pem",
    type: "sec1",
    cipher: "aes-256-cbc",
    passphrase: "pw",
  });
  const err = thrown(() => loadSigningKey(legacy as string, SOURCE));
  expect(err.message).toContain("passphrase-protected OpenSSL");
  expectNoKeyBytes(err, legacy as string);
  expect(
    thrown(() => loadSigningKey("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", SOURCE))
      .message,
  ).toContain('a PEM "CERTIFICATE" block');
  expect(thrown(() => loadSigningKey("just text", SOURCE)).message).toContain("no PEM key block found");
  expect(thrown(() => loadSigningKey(sec1 + pkcs8, SOURCE)).message).toContain(
    "2 PEM blocks (EC PRIVATE KEY, PRIVATE KEY)",
  );
});

test("a damaged key block is refused without echoing it", () => {
  const body = sec1.split("\n");
  const truncated = [body[0], body[1], body[2]?.slice(0, 20), body.at(-2)].join("\n");
  const err = thrown(() => loadSigningKey(truncated, SOURCE));
  expect(err.message).toMatch(/not valid base64|could not be parsed/);
  expectNoKeyBytes(err, sec1);
  const junk = "-----BEGIN EC PRIVATE KEY-----\nAAAAAAAA\n-----END EC PRIVATE KEY-----\n";
  expect(thrown(() => loadSigningKey(junk, SOURCE)).message).toBe(
    '--key "/keys/k.pem": the EC PRIVATE KEY (SEC1) block could not be parsed as a private key',
  );
  expect(thrown(() => loadSigningKey("-----BEGIN EC PRIVATE KEY-----\nAAAA\n", SOURCE)).message).toContain(
    "no END line",
  );
});

test("a verification key: SPKI P-256 only; a private key given is refused with the remedy", () => {
  const key = loadVerificationKey(spki, SOURCE);
  expect(key.fingerprint).toBe(fingerprint);
  for (const pem of [sec1, pkcs8]) {
    const err = thrown(() => loadVerificationKey(pem, SOURCE));
    expect(err.message).toContain("a private key");
    expect(err.message).toContain("where the public key is expected");
    expect(err.remedy).toContain("-pubout");
    expectNoKeyBytes(err, pem);
  }
  const p384 = generateKeyPairSync("ec", { namedCurve: "secp384r1" }).publicKey.export({
    format: "pem",
    type: "spki",
  });
  expect(thrown(() => loadVerificationKey(p384 as string, SOURCE)).message).toBe(
    '--key "/keys/k.pem": an EC key on curve secp384r1; expected an ECDSA P-256 (prime256v1) public key',
  );
  const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({
    format: "pem",
    type: "pkcs1",
  });
  expect(thrown(() => loadVerificationKey(rsa as string, SOURCE)).message).toContain(
    'a PEM "RSA PUBLIC KEY" block',
  );
});

test("verifySignature: node's DER signatures verify; tampering, another key and malformed base64 do not", () => {
  const payload = new TextEncoder().encode("payload");
  const sig = sign("sha256", payload, { key: p256.privateKey, dsaEncoding: "der" }).toString("base64");
  const key = loadVerificationKey(spki, SOURCE);
  expect(verifySignature(payload, sig, key)).toBe(true);
  expect(verifySignature(payload, `${sig}\n`, key.publicKey)).toBe(true);
  expect(verifySignature(new TextEncoder().encode("payloaD"), sig, key)).toBe(false);
  const other = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey;
  expect(verifySignature(payload, sig, other)).toBe(false);
  for (const bad of ["", "!!!!", sig.slice(1), `${sig}A`, "AAAA"])
    expect(verifySignature(payload, bad, key)).toBe(false);
});

test("pemBlocks: labels, headers and the DER of each block", () => {
  const blocks = pemBlocks(`x\n${sec1}y\n${spki}`);
  expect(Array.isArray(blocks) && blocks.map((b) => b.label)).toEqual(["EC PRIVATE KEY", "PUBLIC KEY"]);
});

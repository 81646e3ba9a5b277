import { expect, test } from "bun:test";
import { generateKeyPairSync, verify } from "node:crypto";
import { loadSigningKey } from "../../src/image/sign/_keys.ts";
import { signBlob, verifyBlob } from "../../src/image/sign/blob.ts";

const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
const key = loadSigningKey(pair.privateKey.export({ format: "pem", type: "sec1" }) as string, {
  flag: "--key",
  path: "k",
});
const sums = new TextEncoder().encode(`${"ab".repeat(32)}  aicr-linux-x64\n`);

test("sign-blob's format: base64 of a DER signature over the bytes, no newline, the same every time", () => {
  const sig = signBlob(sums, key);
  expect(sig).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
  expect(
    verify("sha256", sums, { key: pair.publicKey, dsaEncoding: "der" }, Buffer.from(sig, "base64")),
  ).toBe(true);
  expect(signBlob(sums, key)).toBe(sig);
  expect(verifyBlob(sums, sig, key.verification)).toBe(true);
  expect(verifyBlob(sums, `${sig}\n`, key.verification)).toBe(true);
  expect(verifyBlob(new Uint8Array([...sums, 10]), sig, key.verification)).toBe(false);
});

// cosign verify-blob's own verdict on SHA256SUMS.sig (offline): test/e2e/supply-chain-cosign.test.ts

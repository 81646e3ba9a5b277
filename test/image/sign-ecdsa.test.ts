import { expect, test } from "bun:test";
import { createPublicKey, generateKeyPairSync, verify } from "node:crypto";
import {
  derSignature,
  N,
  publicPoint,
  rfc6979Nonces,
  signHash,
  signMessage,
} from "../../src/image/sign/_ecdsa.ts";

const hex = (v: bigint) => v.toString(16).toUpperCase().padStart(64, "0");
const sha256 = (s: string | Uint8Array) => new Uint8Array(new Bun.CryptoHasher("sha256").update(s).digest());

/** RFC 6979 appendix A.2.5: ECDSA, 256 bits (prime field), the key and the SHA-256 vectors. */
const X = 0xc9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721n;
const UX = "60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6";
const UY = "7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299";
const VECTORS = [
  {
    message: "sample",
    k: "A6E3C57DD01ABE90086538398355DD4C3B17AA873382B0F24D6129493D8AAD60",
    r: "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716",
    s: "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8",
  },
  {
    message: "test",
    k: "D16B6AE827F17175E040871A1C7EC3500192C4C92677336EC2537ACAEE0008E0",
    r: "F1ABB023518351CD71D881567B1EA663ED3EFCF6C5132B354F28D3B0B7D38367",
    s: "019F4113742A2B14BD25926B49C649155F267E60D3814B4C0CC84250E46F0083",
  },
];

/** The RFC's key as a node KeyObject (from its public point), for cross-checks. */
const rfcPublicKey = createPublicKey({
  key: {
    kty: "EC",
    crv: "P-256",
    x: Buffer.from(UX, "hex").toString("base64url"),
    y: Buffer.from(UY, "hex").toString("base64url"),
  },
  format: "jwk",
});

test("the RFC 6979 A.2.5 key's public point", () => {
  const { x, y } = publicPoint(X);
  expect(hex(x)).toBe(UX);
  expect(hex(y)).toBe(UY);
});

test("RFC 6979 A.2.5 with SHA-256: the nonce k and the signature (r, s) for 'sample' and 'test'", () => {
  for (const v of VECTORS) {
    const hash = sha256(v.message);
    expect(hex(rfc6979Nonces(X, hash).next().value as bigint)).toBe(v.k);
    const { r, s } = signHash(X, hash);
    expect([hex(r), hex(s)]).toEqual([v.r, v.s]);
    const der = signMessage(X, new TextEncoder().encode(v.message), rfcPublicKey);
    expect(Buffer.from(der).equals(Buffer.from(derSignature(r, s)))).toBe(true);
    expect(verify("sha256", Buffer.from(v.message), { key: rfcPublicKey, dsaEncoding: "der" }, der)).toBe(
      true,
    );
  }
});

test("DER: minimal integers, a leading zero when the top bit is set", () => {
  expect(Buffer.from(derSignature(1n, 0x80n)).toString("hex")).toBe("3007020101020200" + "80");
  const big = derSignature(N - 1n, 0x7fn);
  expect(big[0]).toBe(0x30);
  expect(big[3]).toBe(33); // r's length: 32 bytes plus the zero
  expect(big[4]).toBe(0);
});

test("signatures of random keys and messages verify with node:crypto, and signing twice gives the same bytes", () => {
  for (let i = 0; i < 24; i++) {
    const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const d = BigInt(
      `0x${Buffer.from(pair.privateKey.export({ format: "jwk" }).d ?? "", "base64url").toString("hex")}`,
    );
    const jwk = pair.publicKey.export({ format: "jwk" });
    const { x, y } = publicPoint(d);
    expect(hex(x)).toBe(
      Buffer.from(jwk.x ?? "", "base64url")
        .toString("hex")
        .toUpperCase(),
    );
    expect(hex(y)).toBe(
      Buffer.from(jwk.y ?? "", "base64url")
        .toString("hex")
        .toUpperCase(),
    );
    const message = crypto.getRandomValues(new Uint8Array(1 + i * 7));
    const der = signMessage(d, message, pair.publicKey);
    expect(verify("sha256", message, { key: pair.publicKey, dsaEncoding: "der" }, der)).toBe(true);
    expect(Buffer.from(signMessage(d, message, pair.publicKey)).equals(Buffer.from(der))).toBe(true);
  }
});

test("a scalar out of range or a hash of the wrong size is refused", () => {
  expect(() => signHash(0n, sha256("x"))).toThrow("not in [1, n-1]");
  expect(() => signHash(N, sha256("x"))).toThrow("not in [1, n-1]");
  expect(() => signHash(1n, new Uint8Array(20))).toThrow("32 bytes");
});

test("a public key that is not the scalar's: the check before return refuses to hand out the signature", () => {
  const other = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey;
  expect(() => signMessage(X, new Uint8Array([1]), other)).toThrow("did not verify");
});

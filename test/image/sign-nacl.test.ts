import { expect, test } from "bun:test";
import {
  hsalsa20,
  poly1305,
  secretboxOpen,
  secretboxSeal,
  xsalsa20Stream,
} from "../../src/image/sign/_nacl.ts";
import { SECRETBOX_VECTORS } from "./_sign-fixtures.ts";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const unhex = (s: string) => new Uint8Array(Buffer.from(s, "hex"));
const text = (s: string) => new TextEncoder().encode(s);
const xorStream = (message: Uint8Array, nonce: Uint8Array, key: Uint8Array) => {
  const stream = xsalsa20Stream(key, nonce, message.length);
  return message.map((v, i) => v ^ (stream[i] as number));
};

test("Poly1305: RFC 8439 §2.5.2's example", () => {
  const key = unhex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
  expect(hex(poly1305(key, text("Cryptographic Forum Research Group")))).toBe(
    "a8061dc1305136c6c22b8baf0c0127a9",
  );
});

test("Poly1305: the modular edge cases of x/crypto's vectors (2^130-1, -5, -6 and their multiples)", () => {
  const one = unhex(`01${"00".repeat(31)}`);
  const zeros = (blocks: number) => "00".repeat(16 * blocks);
  const cases: [string, string][] = [
    [`${"ff".repeat(16)}${zeros(2)}`, `04${"00".repeat(15)}`],
    [`fa${"ff".repeat(15)}${zeros(2)}`, `fa${"ff".repeat(15)}`],
    [`fb${"ff".repeat(15)}${zeros(2)}`, "00".repeat(16)],
    [`fa${"ff".repeat(15)}fa${"ff".repeat(15)}${zeros(4)}`, `f9${"ff".repeat(15)}`],
    [`fb${"ff".repeat(15)}fb${"ff".repeat(15)}${zeros(4)}`, "00".repeat(16)],
  ];
  for (const [input, tag] of cases) expect(hex(poly1305(one, unhex(input)))).toBe(tag);
  expect(
    hex(
      poly1305(
        unhex(`3b3a29e93b213a5c5c3b3b053a3a8c0d${"00".repeat(16)}`),
        unhex("81d8b2e46a25213b58fee4213a2a28e921c12a9632516d3b73272727becf2129"),
      ),
    ),
  ).toBe("6dc18b8c344cd79927118bbe84b7f314");
});

test("HSalsa20: NaCl's core1 test (the shared secret to the secretbox key 'firstkey')", () => {
  const shared = unhex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
  expect(hex(hsalsa20(shared, new Uint8Array(16)))).toBe(
    "1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389",
  );
});

test("XSalsa20: x/crypto's vectors (a short message, then 64 zero bytes)", () => {
  const nonce = text("24-byte nonce for xsalsa");
  const key = text("this is 32-byte key for xsalsa20");
  expect(hex(xorStream(text("Hello world!"), nonce, key))).toBe("002d4513843fc240c401e541");
  expect(hex(xorStream(new Uint8Array(64), nonce, key))).toBe(
    "4848297feb1fb52fb66d81609bd547fabcbe7026edc8b5e5e449d088bfa69c088f5d8da1d791267c2c195a7f8cae9c4b4050d08ce6d3a151ec265f3a58e47648",
  );
  expect(() => xsalsa20Stream(key, nonce.subarray(8), 1)).toThrow("24-byte nonce");
});

test("secretbox: the NaCl C implementation's box (key 1s, nonce 2s, 64 bytes of 3s), sealed and opened", () => {
  const key = new Uint8Array(32).fill(1);
  const nonce = new Uint8Array(24).fill(2);
  const message = new Uint8Array(64).fill(3);
  const expected =
    "8442bc313f4626f1359e3b50122b6ce6fe66ddfe7d39d14e637eb4fd5b45beadab55198df6ab5368439792a23c87db70acb6156dc5ef957ac04f6276cf6093b84be77ff0849cc33e34b7254d5a8f65ad";
  expect(hex(secretboxSeal(message, nonce, key))).toBe(expected);
  expect(secretboxOpen(unhex(expected), nonce, key)).toEqual(message);
});

test("secretbox: Go's nacl/secretbox.Seal across block boundaries (0, 1, 63, 64, 65, 200 bytes)", () => {
  const key = Uint8Array.from({ length: 32 }, (_, i) => (i * 7) & 0xff);
  const nonce = Uint8Array.from({ length: 24 }, (_, i) => 255 - i);
  for (const [n, box] of SECRETBOX_VECTORS) {
    const message = Uint8Array.from({ length: n }, (_, i) => (i * 13 + n) & 0xff);
    expect([n, hex(secretboxSeal(message, nonce, key))]).toEqual([n, box]);
    expect(secretboxOpen(unhex(box), nonce, key)).toEqual(message);
  }
});

test("secretbox: a flipped bit anywhere, another key, another nonce or a short box do not open", () => {
  const key = new Uint8Array(32).fill(9);
  const nonce = new Uint8Array(24).fill(4);
  const box = secretboxSeal(text("a PKCS#8 key, say"), nonce, key);
  for (let i = 0; i < box.length; i++) {
    const bad = box.slice();
    bad[i] = (bad[i] as number) ^ 0x20;
    expect(secretboxOpen(bad, nonce, key)).toBeUndefined();
  }
  expect(secretboxOpen(box, nonce, new Uint8Array(32).fill(8))).toBeUndefined();
  expect(secretboxOpen(box, new Uint8Array(24), key)).toBeUndefined();
  expect(secretboxOpen(box.subarray(0, 15), nonce, key)).toBeUndefined();
});

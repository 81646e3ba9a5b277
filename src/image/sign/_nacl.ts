/**
 * NaCl's secretbox (crypto_secretbox_xsalsa20poly1305), which cosign's encrypted key files use and
 * node:crypto lacks: XSalsa20 (Salsa20/20 under a subkey from HSalsa20) for the stream, Poly1305 for
 * the tag. Written from the specifications (Bernstein's "Salsa20 specification", "Extending the
 * Salsa20 nonce", "Cryptography in NaCl"; RFC 8439 §2.5 for Poly1305) and tested against NaCl's,
 * RFC 8439's and x/crypto's published vectors. Small inputs only (a key file): clarity over speed,
 * Poly1305 in BigInt. Pure.
 */
import { timingSafeEqual } from "node:crypto";

/** "expand 32-byte k" as four little-endian words. */
const SIGMA = [0x61707865, 0x3320646e, 0x79622d32, 0x6b206574] as const;

const rotl = (v: number, c: number): number => ((v << c) | (v >>> (32 - c))) >>> 0;

function readWords(bytes: Uint8Array, offset: number, count: number): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, count * 4);
  return Array.from({ length: count }, (_, i) => view.getUint32(i * 4, true));
}

/** Ten double rounds (column round, then row round) over the 16-word state, in place. */
function doubleRounds(x: Uint32Array): void {
  const qr = (a: number, b: number, c: number, d: number) => {
    x[b] = (x[b] as number) ^ rotl(((x[a] as number) + (x[d] as number)) >>> 0, 7);
    x[c] = (x[c] as number) ^ rotl(((x[b] as number) + (x[a] as number)) >>> 0, 9);
    x[d] = (x[d] as number) ^ rotl(((x[c] as number) + (x[b] as number)) >>> 0, 13);
    x[a] = (x[a] as number) ^ rotl(((x[d] as number) + (x[c] as number)) >>> 0, 18);
  };
  for (let i = 0; i < 10; i++) {
    qr(0, 4, 8, 12); // columns
    qr(5, 9, 13, 1);
    qr(10, 14, 2, 6);
    qr(15, 3, 7, 11);
    qr(0, 1, 2, 3); // rows
    qr(5, 6, 7, 4);
    qr(10, 11, 8, 9);
    qr(15, 12, 13, 14);
  }
}

/**
 * The Salsa20 input matrix: constants on the diagonal, the key's eight words around them, and
 * four words of `middle` (nonce and block counter, or HSalsa20's 16-byte input) in positions 6-9.
 */
function initialState(key: Uint8Array, middle: number[]): Uint32Array {
  const k = readWords(key, 0, 8);
  return Uint32Array.from([
    SIGMA[0],
    k[0],
    k[1],
    k[2],
    k[3],
    SIGMA[1],
    middle[0],
    middle[1],
    middle[2],
    middle[3],
    SIGMA[2],
    k[4],
    k[5],
    k[6],
    k[7],
    SIGMA[3],
  ] as number[]);
}

/** HSalsa20: the 32-byte subkey for `key` and a 16-byte input (no feed-forward; words 0,5,10,15,6,7,8,9). */
export function hsalsa20(key: Uint8Array, input: Uint8Array): Uint8Array {
  const x = initialState(key, readWords(input, 0, 4));
  doubleRounds(x);
  const out = new Uint8Array(32);
  const view = new DataView(out.buffer);
  for (const [i, w] of [0, 5, 10, 15, 6, 7, 8, 9].entries()) view.setUint32(i * 4, x[w] as number, true);
  return out;
}

/** `length` bytes of Salsa20/20 keystream for a 32-byte key and 8-byte nonce, from block 0. */
function salsa20Stream(key: Uint8Array, nonce: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(Math.ceil(length / 64) * 64);
  const view = new DataView(out.buffer);
  const [n0, n1] = readWords(nonce, 0, 2) as [number, number];
  for (let block = 0; block * 64 < length; block++) {
    const input = initialState(key, [n0, n1, block >>> 0, Math.floor(block / 2 ** 32) >>> 0]);
    const x = Uint32Array.from(input);
    doubleRounds(x);
    for (let i = 0; i < 16; i++)
      view.setUint32(block * 64 + i * 4, ((x[i] as number) + (input[i] as number)) >>> 0, true);
  }
  return out.subarray(0, length);
}

/** XSalsa20 keystream: Salsa20 under HSalsa20(key, nonce[0..16]) with nonce[16..24]. */
export function xsalsa20Stream(key: Uint8Array, nonce: Uint8Array, length: number): Uint8Array {
  if (key.length !== 32 || nonce.length !== 24)
    throw new Error("XSalsa20 takes a 32-byte key and a 24-byte nonce");
  return salsa20Stream(hsalsa20(key, nonce.subarray(0, 16)), nonce.subarray(16), length);
}

const P1305 = (1n << 130n) - 5n;

const littleEndian = (bytes: Uint8Array): bigint => {
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i] as number);
  return v;
};

/** Poly1305 (RFC 8439 §2.5.1): the 16-byte tag of `message` under a one-time 32-byte key. */
export function poly1305(key: Uint8Array, message: Uint8Array): Uint8Array {
  if (key.length !== 32) throw new Error("Poly1305 takes a 32-byte key");
  const r = littleEndian(key.subarray(0, 16)) & 0x0ffffffc0ffffffc0ffffffc0fffffffn;
  const s = littleEndian(key.subarray(16, 32));
  let acc = 0n;
  for (let i = 0; i < message.length; i += 16) {
    const block = message.subarray(i, i + 16);
    const n = littleEndian(block) | (1n << BigInt(8 * block.length)); // the 0x01 byte past the block
    acc = ((acc + n) * r) % P1305;
  }
  let tag = (acc + s) & ((1n << 128n) - 1n);
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) {
    out[i] = Number(tag & 0xffn);
    tag >>= 8n;
  }
  return out;
}

const xor = (a: Uint8Array, b: Uint8Array): Uint8Array => a.map((v, i) => v ^ (b[i] as number));

/** secretbox: tag (16 bytes) ‖ ciphertext, as NaCl and Go's x/crypto/nacl/secretbox.Seal give it. */
export function secretboxSeal(message: Uint8Array, nonce: Uint8Array, key: Uint8Array): Uint8Array {
  const stream = xsalsa20Stream(key, nonce, 32 + message.length);
  const ciphertext = xor(message, stream.subarray(32));
  const tag = poly1305(stream.subarray(0, 32), ciphertext);
  const box = new Uint8Array(16 + ciphertext.length);
  box.set(tag);
  box.set(ciphertext, 16);
  return box;
}

/** The message of a secretbox, or undefined when its tag does not verify (wrong key, damaged box). */
export function secretboxOpen(box: Uint8Array, nonce: Uint8Array, key: Uint8Array): Uint8Array | undefined {
  if (box.length < 16) return undefined;
  const ciphertext = box.subarray(16);
  const stream = xsalsa20Stream(key, nonce, 32 + ciphertext.length);
  const tag = poly1305(stream.subarray(0, 32), ciphertext);
  if (!timingSafeEqual(tag, box.subarray(0, 16))) return undefined;
  return xor(ciphertext, stream.subarray(32));
}

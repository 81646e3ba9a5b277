/**
 * ECDSA over P-256 with SHA-256 and deterministic nonces (RFC 6979), so that signing the same bytes
 * with the same key always gives the same signature: signing an archive twice changes nothing.
 * node:crypto signs with random nonces only, hence this file. Output is ASN.1 DER (what cosign's
 * signature annotation and sign-blob carry); every signature is checked with node:crypto.verify
 * before it is returned, so an arithmetic slip can never leave as a bad signature.
 *
 * The arithmetic uses BigInt and is not constant-time: the scalar multiplication is a Montgomery
 * ladder with a fixed number of steps (256) and the same operations for either bit, but BigInt's own
 * timing depends on values. It signs on the operator's build machine, never as a network service.
 */
import { createHmac, type KeyObject, verify } from "node:crypto";

/** P-256 (FIPS 186-4 D.1.2.3, SEC 2 secp256r1). */
const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
/** The order of the base point. */
export const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const GX = 0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296n;
const GY = 0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5n;

const mod = (a: bigint, m: bigint): bigint => {
  const r = a % m;
  return r < 0n ? r + m : r;
};

/** a^e mod m by square-and-multiply over e's 256 bits. */
function powMod(a: bigint, e: bigint, m: bigint): bigint {
  let result = 1n;
  let base = mod(a, m);
  let exp = e;
  while (exp > 0n) {
    if (exp & 1n) result = (result * base) % m;
    base = (base * base) % m;
    exp >>= 1n;
  }
  return result;
}

/** The inverse modulo a prime (Fermat): a^(m-2). */
const invMod = (a: bigint, m: bigint): bigint => powMod(a, m - 2n, m);

/** A point in Jacobian coordinates (X/Z², Y/Z³); Z = 0 is the point at infinity. */
interface Jacobian {
  x: bigint;
  y: bigint;
  z: bigint;
}

const INFINITY: Jacobian = { x: 1n, y: 1n, z: 0n };

/** 2·Q for a = -3 (dbl-2001-b). */
function double(q: Jacobian): Jacobian {
  if (q.z === 0n || q.y === 0n) return INFINITY;
  const delta = (q.z * q.z) % P;
  const gamma = (q.y * q.y) % P;
  const beta = (q.x * gamma) % P;
  const alpha = mod(3n * (q.x - delta) * (q.x + delta), P);
  const x = mod(alpha * alpha - 8n * beta, P);
  const z = mod((q.y + q.z) * (q.y + q.z) - gamma - delta, P);
  const y = mod(alpha * (4n * beta - x) - 8n * gamma * gamma, P);
  return { x, y, z };
}

/** Q1 + Q2 (add-2007-bl), falling back to doubling when they are the same point. */
function add(q1: Jacobian, q2: Jacobian): Jacobian {
  if (q1.z === 0n) return q2;
  if (q2.z === 0n) return q1;
  const z1z1 = (q1.z * q1.z) % P;
  const z2z2 = (q2.z * q2.z) % P;
  const u1 = (q1.x * z2z2) % P;
  const u2 = (q2.x * z1z1) % P;
  const s1 = (q1.y * q2.z * z2z2) % P;
  const s2 = (q2.y * q1.z * z1z1) % P;
  if (u1 === u2) return s1 === s2 ? double(q1) : INFINITY;
  const h = mod(u2 - u1, P);
  const i = (4n * h * h) % P;
  const j = (h * i) % P;
  const r = mod(2n * (s2 - s1), P);
  const v = (u1 * i) % P;
  const x = mod(r * r - j - 2n * v, P);
  const y = mod(r * (v - x) - 2n * s1 * j, P);
  const z = mod(((q1.z + q2.z) * (q1.z + q2.z) - z1z1 - z2z2) * h, P);
  return { x, y, z };
}

/** k·G by a Montgomery ladder over all 256 bits: the same steps whatever k's bits are. */
function multiplyBase(k: bigint): { x: bigint; y: bigint } | undefined {
  let r0 = INFINITY;
  let r1: Jacobian = { x: GX, y: GY, z: 1n };
  for (let i = 255; i >= 0; i--) {
    if ((k >> BigInt(i)) & 1n) {
      r0 = add(r0, r1);
      r1 = double(r1);
    } else {
      r1 = add(r0, r1);
      r0 = double(r0);
    }
  }
  if (r0.z === 0n) return undefined;
  const zInv = invMod(r0.z, P);
  const zInv2 = (zInv * zInv) % P;
  return { x: (r0.x * zInv2) % P, y: (r0.y * zInv2 * zInv) % P };
}

/** The affine public point d·G (tests compare it with node's). */
export function publicPoint(d: bigint): { x: bigint; y: bigint } {
  const point = multiplyBase(d);
  if (!point) throw new Error("the private scalar is not in [1, n-1]");
  return point;
}

const toBytes = (v: bigint, length = 32): Buffer =>
  Buffer.from(v.toString(16).padStart(length * 2, "0"), "hex");
const toBigInt = (b: Uint8Array): bigint =>
  b.length === 0 ? 0n : BigInt(`0x${Buffer.from(b).toString("hex")}`);

/** The 32-byte hash as an integer; for P-256 with SHA-256 qlen = hlen, so bits2int is the plain value. */
const bits2int = (hash: Uint8Array): bigint => toBigInt(hash);

/**
 * RFC 6979 section 3.2: the nonces for (d, hash), in order — HMAC-SHA256 DRBG seeded with the key and
 * the hash reduced mod n. The caller takes the first that gives a non-zero r and s.
 */
export function* rfc6979Nonces(d: bigint, hash: Uint8Array): Generator<bigint> {
  const hmac = (key: Buffer, ...parts: Uint8Array[]): Buffer => {
    const h = createHmac("sha256", key);
    for (const part of parts) h.update(part);
    return h.digest();
  };
  const x = toBytes(d);
  const h1 = toBytes(mod(bits2int(hash), N));
  let v: Buffer = Buffer.alloc(32, 0x01);
  let k: Buffer = Buffer.alloc(32, 0x00);
  k = hmac(k, v, Buffer.of(0x00), x, h1);
  v = hmac(k, v);
  k = hmac(k, v, Buffer.of(0x01), x, h1);
  v = hmac(k, v);
  for (;;) {
    v = hmac(k, v); // tlen = qlen = hlen: one block is enough
    const candidate = toBigInt(v);
    if (candidate >= 1n && candidate < N) yield candidate;
    k = hmac(k, v, Buffer.of(0x00));
    v = hmac(k, v);
  }
}

/** (r, s) over a SHA-256 `hash` with the private scalar `d`, the nonce from RFC 6979. */
export function signHash(d: bigint, hash: Uint8Array): { r: bigint; s: bigint } {
  if (d < 1n || d >= N) throw new Error("the private scalar is not in [1, n-1]");
  if (hash.length !== 32) throw new Error("the hash must be 32 bytes (SHA-256)");
  const z = bits2int(hash);
  for (const k of rfc6979Nonces(d, hash)) {
    const point = multiplyBase(k);
    if (!point) continue;
    const r = point.x % N;
    if (r === 0n) continue;
    const s = mod(invMod(k, N) * (z + r * d), N);
    if (s === 0n) continue;
    return { r, s };
  }
  throw new Error("unreachable: the nonce generator never ends");
}

/** A DER INTEGER of a non-negative value: minimal bytes, a leading zero when the top bit is set. */
function derInteger(v: bigint): Buffer {
  let bytes = toBytes(v, 32);
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  bytes = bytes.subarray(start);
  if ((bytes[0] ?? 0) & 0x80) bytes = Buffer.concat([Buffer.of(0), bytes]);
  return Buffer.concat([Buffer.of(0x02, bytes.length), bytes]);
}

/** ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER } (at most 72 bytes, short-form lengths). */
export function derSignature(r: bigint, s: bigint): Uint8Array {
  const body = Buffer.concat([derInteger(r), derInteger(s)]);
  return new Uint8Array(Buffer.concat([Buffer.of(0x30, body.length), body]));
}

/**
 * The DER ECDSA P-256 SHA-256 signature of `message` by the scalar `d`, deterministic, and verified
 * with `publicKey` (node:crypto) before it is returned.
 */
export function signMessage(d: bigint, message: Uint8Array, publicKey: KeyObject): Uint8Array {
  const hash = new Bun.CryptoHasher("sha256").update(message).digest();
  const { r, s } = signHash(d, new Uint8Array(hash));
  const der = derSignature(r, s);
  if (!verify("sha256", message, { key: publicKey, dsaEncoding: "der" }, der))
    throw new Error("the signature did not verify with the key's public half (a bug in _ecdsa.ts)");
  return der;
}

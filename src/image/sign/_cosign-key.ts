/**
 * cosign's encrypted private key files ("ENCRYPTED SIGSTORE PRIVATE KEY", formerly "ENCRYPTED COSIGN
 * PRIVATE KEY"): the PEM body is JSON written by go-securesystemslib's encrypted package —
 *   {"kdf":{"name":"scrypt","params":{"N":…,"r":8,"p":1},"salt":<base64>},
 *    "cipher":{"name":"nacl/secretbox","nonce":<base64, 24 bytes>},"ciphertext":<base64>}
 * The password through scrypt gives a 32-byte key that opens the secretbox (_nacl.ts); inside is the
 * PKCS#8 DER of the key. Only the three scrypt settings that package writes (N = 2^15, 2^16, 2^17;
 * r = 8; p = 1) are accepted, as it does: no file can make aicr spend unbounded memory or time.
 */
import { scryptSync } from "node:crypto";
import { secretboxOpen } from "./_nacl.ts";

/** go-securesystemslib's legacy, standard and OWASP scrypt parameters: the only ones it reads. */
export const SCRYPT_N = [32768, 65536, 131072] as const;
const SCRYPT_R = 8;
const SCRYPT_P = 1;

/** A key file that cannot be opened: the problem and its remedy (_keys.ts names the file). */
export class CosignKeyError extends Error {
  override readonly name = "CosignKeyError";
  constructor(
    message: string,
    readonly remedy: string,
  ) {
    super(message);
  }
}

const fail = (problem: string, remedy: string): CosignKeyError => new CosignKeyError(problem, remedy);

const DAMAGED_REMEDY = "use the key file cosign generate-key-pair wrote, copied completely";

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Go's []byte in JSON: standard base64 with padding. */
function bytesField(value: unknown, name: string): Uint8Array {
  if (
    typeof value !== "string" ||
    !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(value)
  )
    throw fail(`the encrypted key's ${name} is not base64`, DAMAGED_REMEDY);
  return new Uint8Array(Buffer.from(value, "base64"));
}

interface Sealed {
  n: number;
  salt: Uint8Array;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
}

function parseSealed(body: Uint8Array): Sealed {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    throw fail("the encrypted key is not cosign's JSON envelope", DAMAGED_REMEDY);
  }
  if (!isObject(doc) || !isObject(doc.kdf) || !isObject(doc.cipher))
    throw fail("the encrypted key has no kdf and cipher", DAMAGED_REMEDY);
  const { kdf, cipher } = doc;
  if (kdf.name !== "scrypt")
    throw fail(`the encrypted key's KDF is ${JSON.stringify(kdf.name)}, not "scrypt"`, DAMAGED_REMEDY);
  if (cipher.name !== "nacl/secretbox")
    throw fail(
      `the encrypted key's cipher is ${JSON.stringify(cipher.name)}, not "nacl/secretbox"`,
      DAMAGED_REMEDY,
    );
  const params = isObject(kdf.params) ? kdf.params : {};
  const n = params.N;
  if (!SCRYPT_N.includes(n as (typeof SCRYPT_N)[number]) || params.r !== SCRYPT_R || params.p !== SCRYPT_P)
    throw fail(
      `the encrypted key's scrypt parameters (N=${String(n).slice(0, 20)}, r=${String(params.r).slice(0, 20)}, p=${String(params.p).slice(0, 20)}) are not one of cosign's (N=32768, 65536 or 131072; r=8; p=1)`,
      DAMAGED_REMEDY,
    );
  const nonce = bytesField(cipher.nonce, "nonce");
  if (nonce.length !== 24)
    throw fail(`the encrypted key's nonce has ${nonce.length} bytes, not 24`, DAMAGED_REMEDY);
  return {
    n: n as number,
    salt: bytesField(kdf.salt, "salt"),
    nonce,
    ciphertext: bytesField(doc.ciphertext, "ciphertext"),
  };
}

/** scrypt's memory is 128·N·r bytes; maxmem leaves room above the largest accepted N. */
export const scryptKey = (password: string, salt: Uint8Array, n: number): Uint8Array =>
  new Uint8Array(
    scryptSync(Buffer.from(password, "utf8"), salt, 32, {
      N: n,
      r: SCRYPT_R,
      p: SCRYPT_P,
      maxmem: 256 * 131072 * SCRYPT_R,
    }),
  );

/** The PKCS#8 DER inside a cosign key file's PEM body; a wrong password is a CosignKeyError. */
export function decryptCosignKey(body: Uint8Array, password: string): Uint8Array {
  const sealed = parseSealed(body);
  const key = scryptKey(password, sealed.salt, sealed.n);
  const der = secretboxOpen(sealed.ciphertext, sealed.nonce, key);
  if (!der)
    throw fail(
      "wrong password or damaged key",
      "give the password the key was generated with (--password-stdin, AICR_SIGNING_KEY_PASSWORD or COSIGN_PASSWORD)",
    );
  return der;
}

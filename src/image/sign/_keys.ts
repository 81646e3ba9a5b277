/**
 * Signing and verification keys: ECDSA P-256 only, read from PEM text the caller has already read
 * (through core/input-file.ts). Signing keys: "EC PRIVATE KEY" (SEC1) or "PRIVATE KEY" (PKCS#8), and
 * cosign's encrypted key files (_cosign-key.ts). Verification keys: "PUBLIC KEY" (SPKI). Anything else
 * is refused naming what was found and the form expected; no message ever carries a byte of a key.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject, verify } from "node:crypto";
import { AicrError } from "../../core/errors.ts";
import { CosignKeyError, decryptCosignKey } from "./_cosign-key.ts";
import { signMessage } from "./_ecdsa.ts";

/** Where a key came from, for messages: the flag (or variable) and the path. */
export interface KeySource {
  flag: string;
  path: string;
}

/** A P-256 public key, its SPKI DER and fingerprint (`sha256:<hex>` of the DER). */
export interface VerificationKey {
  publicKey: KeyObject;
  spki: Uint8Array;
  fingerprint: string;
}

/**
 * A P-256 private key. The scalar sits in a private field, so logging or serialising the object
 * shows the public half only.
 */
export class SigningKey {
  readonly #d: bigint;
  constructor(
    d: bigint,
    readonly verification: VerificationKey,
  ) {
    this.#d = d;
  }
  /** The private scalar, for _ecdsa.ts. */
  get scalar(): bigint {
    return this.#d;
  }
  get fingerprint(): string {
    return this.verification.fingerprint;
  }
  /** The DER ECDSA P-256 SHA-256 signature of `message`, deterministic (RFC 6979), verified before return. */
  sign(message: Uint8Array): Uint8Array {
    return signMessage(this.#d, message, this.verification.publicKey);
  }
  toJSON(): { fingerprint: string } {
    return { fingerprint: this.fingerprint };
  }
}

const GENERATE_REMEDY =
  "generate one: openssl ecparam -name prime256v1 -genkey -noout -out key.pem (or cosign generate-key-pair)";

function keyError(source: KeySource, problem: string, remedy: string): AicrError {
  return new AicrError("INVALID_REQUEST", `${source.flag} ${JSON.stringify(source.path)}: ${problem}`, {
    remedy,
    context: { field: source.flag, value: source.path },
  });
}

export interface PemBlock {
  label: string;
  /** Header lines (RFC 1421 "Proc-Type: 4,ENCRYPTED"), when the block has any. */
  headers: string[];
  der: Uint8Array;
}

const BASE64_LINE = /^[A-Za-z0-9+/]*={0,2}$/;

/** Every PEM block of the text, in order; text outside blocks is ignored (as openssl does). */
export function pemBlocks(text: string): PemBlock[] | { problem: string } {
  const lines = text.split(/\r?\n/);
  const blocks: PemBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const begin = /^-----BEGIN ([A-Z0-9 ]+)-----\s*$/.exec(lines[i] ?? "");
    if (!begin) continue;
    const label = begin[1] ?? "";
    const headers: string[] = [];
    const body: string[] = [];
    let end = -1;
    for (let j = i + 1; j < lines.length; j++) {
      const line = (lines[j] ?? "").trim();
      if (line === `-----END ${label}-----`) {
        end = j;
        break;
      }
      if (line.includes(":") && body.length === 0) headers.push(line);
      else if (line !== "") body.push(line);
    }
    if (end < 0) return { problem: `the PEM block "${label}" has no END line` };
    const b64 = body.join("");
    if (!body.every((l) => BASE64_LINE.test(l)) || b64.length % 4 !== 0)
      return { problem: `the PEM block "${label}" is not valid base64` };
    blocks.push({ label, headers, der: new Uint8Array(Buffer.from(b64, "base64")) });
    i = end;
  }
  return blocks;
}

/** The one key block of a PEM file; openssl's "EC PARAMETERS" block beside it is skipped. */
function keyBlock(text: string, source: KeySource, expected: string, remedy: string): PemBlock {
  const found = pemBlocks(text);
  if (!Array.isArray(found)) throw keyError(source, found.problem, remedy);
  const keys = found.filter((b) => b.label !== "EC PARAMETERS");
  if (keys.length === 0) throw keyError(source, `no PEM key block found; expected ${expected}`, remedy);
  if (keys.length > 1)
    throw keyError(
      source,
      `${keys.length} PEM blocks (${keys.map((b) => b.label).join(", ")}); expected one: ${expected}`,
      "pass a file with exactly one key",
    );
  return keys[0] as PemBlock;
}

/** What kind of key a KeyObject is, in words: "an RSA key (2048 bits)", "an EC key on secp384r1". */
export function describeKey(key: KeyObject): string {
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case "ec":
      return `an EC key on curve ${details.namedCurve ?? "unknown"}`;
    case "rsa":
    case "rsa-pss":
      return `an RSA key (${details.modulusLength ?? "?"} bits)`;
    case "ed25519":
      return "an Ed25519 key";
    default:
      return `a ${key.asymmetricKeyType ?? "unknown"} key`;
  }
}

/** Curves the runtime's crypto cannot load, by their OID's DER, to name them when a key fails to parse. */
const OTHER_CURVES: [string, string][] = [
  ["secp256k1", "06052b8104000a"],
  ["secp224r1", "06052b81040021"],
  ["brainpoolP256r1", "06092b2403030208010107"],
  ["brainpoolP384r1", "06092b240303020801010b"],
  ["brainpoolP512r1", "06092b240303020801010d"],
];

function unsupportedCurve(der: Uint8Array): string | undefined {
  const hex = Buffer.from(der).toString("hex");
  return OTHER_CURVES.find(([, oid]) => hex.includes(oid))?.[0];
}

const isP256 = (key: KeyObject): boolean =>
  key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1";

/** The verification half of any P-256 KeyObject (public or private). */
export function verificationKeyOf(key: KeyObject): VerificationKey {
  const pub = key.type === "private" ? createPublicKey(key) : key;
  const spki = new Uint8Array(pub.export({ format: "der", type: "spki" }));
  return {
    publicKey: pub,
    spki,
    fingerprint: `sha256:${createHash("sha256").update(spki).digest("hex")}`,
  };
}

const SIGNING_FORMS =
  'a PEM ECDSA P-256 private key ("EC PRIVATE KEY", "PRIVATE KEY", or cosign\'s "ENCRYPTED SIGSTORE PRIVATE KEY")';

/**
 * A signing key from a PKCS#8 or SEC1 DER: P-256 only. `form` names the encoding for messages.
 * Exported for the cosign key file, whose decrypted content is PKCS#8.
 */
export function signingKeyFromDer(der: Uint8Array, type: "pkcs8" | "sec1", source: KeySource): SigningKey {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: Buffer.from(der), format: "der", type });
  } catch {
    const curve = unsupportedCurve(der);
    if (curve)
      throw keyError(
        source,
        `an EC key on curve ${curve}; aicr signs with ECDSA P-256 (prime256v1) keys only`,
        GENERATE_REMEDY,
      );
    throw keyError(
      source,
      `the ${type === "sec1" ? "EC PRIVATE KEY (SEC1)" : "PRIVATE KEY (PKCS#8)"} block could not be parsed as a private key`,
      `check the file is complete, or ${GENERATE_REMEDY}`,
    );
  }
  if (!isP256(key))
    throw keyError(
      source,
      `${describeKey(key)}; aicr signs with ECDSA P-256 (prime256v1) keys only`,
      GENERATE_REMEDY,
    );
  const jwk = key.export({ format: "jwk" });
  const d = BigInt(`0x${Buffer.from(jwk.d ?? "", "base64url").toString("hex") || "0"}`);
  return new SigningKey(d, verificationKeyOf(key));
}

export const COSIGN_KEY_LABELS = ["ENCRYPTED SIGSTORE PRIVATE KEY", "ENCRYPTED COSIGN PRIVATE KEY"];

export interface SigningKeyOptions {
  /** The password of a cosign key file (ignored for an unencrypted key). */
  password?: string | undefined;
}

/** A cosign key file opened with its password: the PKCS#8 inside, P-256 only. */
function cosignKey(block: PemBlock, source: KeySource, password: string | undefined): SigningKey {
  if (password === undefined)
    throw keyError(
      source,
      `cosign's encrypted key ("${block.label}") needs its password`,
      "pipe it with --password-stdin, or set AICR_SIGNING_KEY_PASSWORD (or COSIGN_PASSWORD)",
    );
  let der: Uint8Array;
  try {
    der = decryptCosignKey(block.der, password);
  } catch (err) {
    if (err instanceof CosignKeyError) throw keyError(source, err.message, err.remedy);
    throw err;
  }
  return signingKeyFromDer(der, "pkcs8", source);
}

/** A P-256 signing key from PEM text. */
export function loadSigningKey(text: string, source: KeySource, options: SigningKeyOptions = {}): SigningKey {
  const block = keyBlock(text, source, SIGNING_FORMS, GENERATE_REMEDY);
  if (block.headers.some((h) => /^Proc-Type:\s*4,\s*ENCRYPTED/i.test(h)))
    throw keyError(
      source,
      `a passphrase-protected OpenSSL "${block.label}"; aicr reads unencrypted PEM keys and cosign's encrypted key files`,
      "decrypt it (openssl ec -in key.pem -out plain.pem) or import it (cosign import-key-pair --key key.pem)",
    );
  switch (block.label) {
    case "EC PRIVATE KEY":
      return signingKeyFromDer(block.der, "sec1", source);
    case "PRIVATE KEY":
      return signingKeyFromDer(block.der, "pkcs8", source);
    case "ENCRYPTED PRIVATE KEY":
      throw keyError(
        source,
        "a passphrase-protected PKCS#8 key (ENCRYPTED PRIVATE KEY)",
        "decrypt it (openssl pkcs8 -in key.pem -out plain.pem) or import it as a cosign key (cosign import-key-pair --key key.pem)",
      );
    case "RSA PRIVATE KEY":
      throw keyError(
        source,
        "an RSA private key (PKCS#1); aicr signs with ECDSA P-256 (prime256v1) keys only",
        GENERATE_REMEDY,
      );
    case "PUBLIC KEY":
      throw keyError(
        source,
        `a public key, where a private key is needed to sign; expected ${SIGNING_FORMS}`,
        "pass the private key (the public key is for aicr image verify --key)",
      );
    default:
      if (COSIGN_KEY_LABELS.includes(block.label)) return cosignKey(block, source, options.password);
      throw keyError(source, `a PEM "${block.label}" block; expected ${SIGNING_FORMS}`, GENERATE_REMEDY);
  }
}

const PRIVATE_LABELS = new Set([
  "EC PRIVATE KEY",
  "PRIVATE KEY",
  "ENCRYPTED PRIVATE KEY",
  "RSA PRIVATE KEY",
  ...COSIGN_KEY_LABELS,
]);

const PUBLIC_REMEDY =
  "pass the P-256 public key: openssl ec -in key.pem -pubout -out key.pub (or cosign public-key --key cosign.key)";

/** A P-256 verification key from PEM text: "PUBLIC KEY" (SPKI) only; a private key is refused. */
export function loadVerificationKey(text: string, source: KeySource): VerificationKey {
  const block = keyBlock(text, source, 'a PEM ECDSA P-256 public key ("PUBLIC KEY")', PUBLIC_REMEDY);
  if (PRIVATE_LABELS.has(block.label))
    throw keyError(
      source,
      `a private key ("${block.label}"), where the public key is expected; a verifier never needs the private key`,
      PUBLIC_REMEDY,
    );
  if (block.label !== "PUBLIC KEY")
    throw keyError(
      source,
      `a PEM "${block.label}" block; expected a PEM ECDSA P-256 public key ("PUBLIC KEY")`,
      PUBLIC_REMEDY,
    );
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(block.der), format: "der", type: "spki" });
  } catch {
    const curve = unsupportedCurve(block.der);
    if (curve)
      throw keyError(
        source,
        `an EC key on curve ${curve}; expected an ECDSA P-256 (prime256v1) public key`,
        PUBLIC_REMEDY,
      );
    throw keyError(source, "the PUBLIC KEY block could not be parsed as a public key", PUBLIC_REMEDY);
  }
  if (!isP256(key))
    throw keyError(
      source,
      `${describeKey(key)}; expected an ECDSA P-256 (prime256v1) public key`,
      PUBLIC_REMEDY,
    );
  return verificationKeyOf(key);
}

const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Whether `signatureBase64` (standard base64 of an ASN.1 DER ECDSA signature, as cosign's
 * dev.cosignproject.cosign/signature annotation and sign-blob's output carry it) is a valid
 * ECDSA P-256 SHA-256 signature of `payload` by `key`. Malformed input is simply not valid.
 */
export function verifySignature(
  payload: Uint8Array,
  signatureBase64: string,
  key: VerificationKey | KeyObject,
): boolean {
  const text = signatureBase64.trim();
  if (text === "" || !STRICT_BASE64.test(text)) return false;
  const publicKey = "publicKey" in key ? key.publicKey : key;
  try {
    return verify("sha256", payload, { key: publicKey, dsaEncoding: "der" }, Buffer.from(text, "base64"));
  } catch {
    return false;
  }
}

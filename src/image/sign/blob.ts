/**
 * Detached signatures of files (dist/SHA256SUMS.sig), in cosign sign-blob's format: base64 of the
 * DER ECDSA P-256 SHA-256 signature over the file's bytes, no newline — what
 * `cosign verify-blob --key <pub> --signature <file>.sig <file>` (with --insecure-ignore-tlog) reads.
 */
import { type SigningKey, type VerificationKey, verifySignature } from "./_keys.ts";

/** base64 of the deterministic DER signature of `bytes`. */
export function signBlob(bytes: Uint8Array, key: SigningKey): string {
  return Buffer.from(key.sign(bytes)).toString("base64");
}

/** Whether `signature` (sign-blob's base64, a trailing newline allowed) signs `bytes` by `key`. */
export function verifyBlob(bytes: Uint8Array, signature: string, key: VerificationKey): boolean {
  return verifySignature(bytes, signature, key);
}

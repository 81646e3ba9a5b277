/**
 * The process kubelet's client certificates (CN=system:node:<name>, O=system:nodes), issued in this
 * process by the test CA: a fresh ECDSA P-256 key per node and an X.509 v3 certificate signed with
 * node:crypto — a fraction of a millisecond each, where `clientCert` (../certs.ts) runs openssl twice
 * (about 50 ms, synchronously), so 1,000 nodes stalled the event loop for most of a minute before
 * the first one registered. The certificate is what `clientCert` makes: signed by the same CA, the
 * same subject, `extendedKeyUsage=clientAuth`, two days; it also says `keyUsage=digitalSignature`
 * (critical) and `basicConstraints=CA:FALSE`, as a kubelet's client certificate from the CSR API does.
 * A CA whose key is not EC falls back to `clientCert`.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { clientCert, pki } from "../certs.ts";

const cache = new Map<string, { cert: string; key: string }>();

/** The client certificate and key of node `name`, as PEM (cached for the process, like clientCert). */
export function nodeClientCert(name: string): { cert: string; key: string } {
  const hit = cache.get(name);
  if (hit) return hit;
  const out = issueClientCert(`system:node:${name}`, ["system:nodes"]);
  cache.set(name, out);
  return out;
}

/** A client certificate for `cn` with one O per group, signed by the process's test CA. */
export function issueClientCert(cn: string, groups: string[]): { cert: string; key: string } {
  const p = pki();
  const caKey = createPrivateKey(p.caKey);
  if (caKey.asymmetricKeyType !== "ec") return clientCert(cn, groups);
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40; // positive, 16 bytes
  const now = Date.now();
  const tbs = seq(
    tlv(0xa0, int(Uint8Array.of(2))), // v3
    int(serial),
    ECDSA_WITH_SHA256,
    subjectOf(p.caCert), // the issuer: the CA's subject, byte for byte
    seq(time(new Date(now - 5 * 60_000)), time(new Date(now + 2 * 86_400_000))),
    seq(...groups.map((g) => rdn(OID_O, g)), rdn(OID_CN, cn)),
    new Uint8Array(publicKey.export({ type: "spki", format: "der" })),
    tlv(
      0xa3,
      seq(
        extension(OID_KEY_USAGE, true, tlv(0x03, Uint8Array.of(7, 0x80))), // digitalSignature
        extension(OID_EXT_KEY_USAGE, false, seq(oid(OID_CLIENT_AUTH))),
        extension(OID_BASIC_CONSTRAINTS, true, seq()),
      ),
    ),
  );
  const signature = sign("sha256", tbs, caKey); // DER Ecdsa-Sig-Value, as X.509 wants it
  const der = seq(tbs, ECDSA_WITH_SHA256, tlv(0x03, concat(Uint8Array.of(0), new Uint8Array(signature))));
  return {
    cert: pem("CERTIFICATE", der),
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

// --- DER, just what a certificate needs ---

const OID_CN = "2.5.4.3";
const OID_O = "2.5.4.10";
const OID_KEY_USAGE = "2.5.29.15";
const OID_EXT_KEY_USAGE = "2.5.29.37";
const OID_BASIC_CONSTRAINTS = "2.5.29.19";
const OID_CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function tlv(tag: number, ...content: Uint8Array[]): Uint8Array {
  const body = concat(...content);
  const n = body.length;
  const len: number[] = [];
  if (n < 0x80) len.push(n);
  else {
    for (let v = n; v > 0; v = Math.floor(v / 256)) len.unshift(v & 0xff);
    len.unshift(0x80 | len.length);
  }
  return concat(Uint8Array.of(tag, ...len), body);
}

const seq = (...c: Uint8Array[]) => tlv(0x30, ...c);

/** A non-negative INTEGER from big-endian bytes. */
const int = (b: Uint8Array) => tlv(0x02, b[0]! & 0x80 ? concat(Uint8Array.of(0), b) : b);

function oid(dotted: string): Uint8Array {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const out = [a! * 40 + b!];
  for (const v of rest) {
    const bytes = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) bytes.unshift(0x80 | (x & 0x7f));
    out.push(...bytes);
  }
  return tlv(0x06, Uint8Array.from(out));
}

const ECDSA_WITH_SHA256 = seq(oid("1.2.840.10045.4.3.2"));

const rdn = (type: string, value: string) =>
  tlv(0x31, seq(oid(type), tlv(0x0c, new TextEncoder().encode(value))));

function extension(id: string, critical: boolean, value: Uint8Array): Uint8Array {
  return seq(oid(id), ...(critical ? [tlv(0x01, Uint8Array.of(0xff))] : []), tlv(0x04, value));
}

/** UTCTime (years before 2050), YYMMDDHHMMSSZ. */
function time(d: Date): Uint8Array {
  const s = d.toISOString(); // 2026-12-02T11:13:41.123Z
  const text = `${s.slice(2, 4)}${s.slice(5, 7)}${s.slice(8, 10)}${s.slice(11, 13)}${s.slice(14, 16)}${s.slice(17, 19)}Z`;
  return tlv(0x17, new TextEncoder().encode(text));
}

function pem(label: string, der: Uint8Array): string {
  const b64 = Buffer.from(der).toString("base64");
  return `-----BEGIN ${label}-----\n${b64.replace(/(.{64})/g, "$1\n").replace(/\n$/, "")}\n-----END ${label}-----\n`;
}

/** One element: where its content starts and where it ends. */
function element(der: Uint8Array, at: number): { start: number; end: number } {
  let i = at + 1;
  let n = der[i++]!;
  if (n & 0x80) {
    const k = n & 0x7f;
    n = 0;
    for (let j = 0; j < k; j++) n = n * 256 + der[i++]!;
  }
  return { start: i, end: i + n };
}

const subjects = new Map<string, Uint8Array>();

/** The subject Name of a PEM certificate, as its DER bytes (tag and length included). */
function subjectOf(certPem: string): Uint8Array {
  const hit = subjects.get(certPem);
  if (hit) return hit;
  const b64 = certPem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  const der = new Uint8Array(Buffer.from(b64, "base64"));
  const tbs = element(der, element(der, 0).start); // Certificate → tbsCertificate
  let at = tbs.start;
  if (der[at] === 0xa0) at = element(der, at).end; // [0] version
  for (let skip = 0; skip < 4; skip++) at = element(der, at).end; // serial, signature, issuer, validity
  const subject = der.slice(at, element(der, at).end);
  subjects.set(certPem, subject);
  return subject;
}

/**
 * Test PKI made with the openssl CLI: one CA and one server certificate per process, plus client
 * certificates per user (CN = user, O = each group), cached. Held in memory: openssl works in a
 * scratch directory per call, removed before the call returns, so nothing is left on disk.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Pki {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
}

/**
 * ECDSA P-256 keys (kube-apiserver and kubectl accept them as they do RSA): a handshake then costs the
 * fake a fraction of an RSA-2048 signature, so benchmarks time the clients, not the fake's TLS.
 */
const EC_KEY = ["ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];

let cached: Pki | undefined;
const clientCache = new Map<string, { cert: string; key: string }>();

function openssl(args: string[], cwd: string): void {
  const res = Bun.spawnSync(["openssl", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (res.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${res.stderr.toString()}`);
}

/** Runs `fn` in a fresh directory (given the files to lay out first), removed when it returns. */
function inScratch<T>(files: Record<string, string>, fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), "aicr-fake-pki-"));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text, { mode: 0o600 });
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Certificates live two days: longer than any test run. */
const DAYS = ["-days", "2"];

/** A self-signed CA: `<name>.key` and `<name>.crt` in `dir`; with `san`, a serving certificate for those names. */
function selfSignedCa(dir: string, name: string, cn: string, san?: string[]): void {
  openssl(
    [
      "req",
      "-x509",
      "-newkey",
      ...EC_KEY,
      "-nodes",
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.crt`,
      ...DAYS,
      "-subj",
      `/CN=${cn}`,
      ...(san
        ? ["-addext", `subjectAltName=${san.join(",")}`, "-addext", "extendedKeyUsage=serverAuth"]
        : []),
    ],
    dir,
  );
}

/** A fresh key and a certificate for `subject` signed by the CA `ca` (files in `dir`), with extensions `ext`. */
function issue(dir: string, name: string, subject: string, ca: string, ext: string): void {
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(
    [
      "req",
      "-newkey",
      ...EC_KEY,
      "-nodes",
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.csr`,
      "-subj",
      subject,
    ],
    dir,
  );
  openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${ca}.crt`,
      "-CAkey",
      `${ca}.key`,
      "-CAcreateserial",
      "-out",
      `${name}.crt`,
      ...DAYS,
      "-extfile",
      `${name}.ext`,
    ],
    dir,
  );
}

const read = (dir: string, file: string): string => readFileSync(join(dir, file), "utf8");

/** The process's CA as files, for a signing step. */
const caFiles = (): Record<string, string> => {
  const p = pki();
  return { "ca.crt": p.caCert, "ca.key": p.caKey };
};

export function pki(): Pki {
  if (cached) return cached;
  cached = inScratch({}, (dir) => {
    selfSignedCa(dir, "ca", "aicr-fake-ca");
    issue(
      dir,
      "server",
      "/CN=kube-apiserver",
      "ca",
      // 10.96.0.1 is the `kubernetes` Service's ClusterIP: pods on the real test node reach the fault
      // proxy (which serves this certificate) through it (real/node/README.md).
      "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n",
    );
    return {
      caCert: read(dir, "ca.crt"),
      caKey: read(dir, "ca.key"),
      serverCert: read(dir, "server.crt"),
      serverKey: read(dir, "server.key"),
    };
  });
  return cached;
}

export function clientCert(username: string, groups: string[]): { cert: string; key: string } {
  const id = JSON.stringify([username, groups]);
  const hit = clientCache.get(id);
  if (hit) return hit;
  const esc = (s: string) => s.replace(/[/\\=+,]/g, (ch) => `\\${ch}`);
  const subject = `/CN=${esc(username)}${groups.map((g) => `/O=${esc(g)}`).join("")}`;
  const out = inScratch(caFiles(), (dir) => {
    issue(dir, "client", subject, "ca", "extendedKeyUsage=clientAuth\n");
    return { cert: read(dir, "client.crt"), key: read(dir, "client.key") };
  });
  clientCache.set(id, out);
  return out;
}

/** A self-signed certificate and its key (CN `cn`); with `san` (`DNS:…`, `IP:…`), one that serves them. */
export function selfSigned(cn: string, san?: string[]): { cert: string; key: string } {
  return inScratch({}, (dir) => {
    selfSignedCa(dir, "self", cn, san);
    return { cert: read(dir, "self.crt"), key: read(dir, "self.key") };
  });
}

/** Key material the real control plane needs beyond the CA (test/cluster/real/). */
export const signedBy = {
  /** The ServiceAccount token signing key pair (ES256). */
  serviceAccountKey(): { key: string; pub: string } {
    return inScratch({}, (dir) => {
      openssl(["ecparam", "-genkey", "-name", "prime256v1", "-noout", "-out", "sa.key"], dir);
      openssl(["ec", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir);
      return { key: read(dir, "sa.key"), pub: read(dir, "sa.pub") };
    });
  },
  /** A CA of its own for the authenticating proxy, and the proxy's client certificate (CN=front-proxy). */
  frontProxy(): { ca: string; cert: string; key: string } {
    return inScratch({}, (dir) => {
      selfSignedCa(dir, "fp-ca", "aicr-front-proxy-ca");
      issue(dir, "fp", "/CN=front-proxy", "fp-ca", "extendedKeyUsage=clientAuth\n");
      return { ca: read(dir, "fp-ca.crt"), cert: read(dir, "fp.crt"), key: read(dir, "fp.key") };
    });
  },
};

/**
 * Test PKI made with the openssl CLI: one CA and one server certificate per process, plus client
 * certificates per user (CN = user, O = each group), cached.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Pki {
  dir: string;
  caCert: string;
  caKeyPath: string;
  caCertPath: string;
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

export function pki(): Pki {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), "aicr-fake-pki-"));
  const days = ["-days", "2"];
  openssl(
    [
      "req",
      "-x509",
      "-newkey",
      ...EC_KEY,
      "-nodes",
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      ...days,
      "-subj",
      "/CN=aicr-fake-ca",
    ],
    dir,
  );
  openssl(
    [
      "req",
      "-newkey",
      ...EC_KEY,
      "-nodes",
      "-keyout",
      "server.key",
      "-out",
      "server.csr",
      "-subj",
      "/CN=kube-apiserver",
    ],
    dir,
  );
  writeFileSync(
    join(dir, "server.ext"),
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
  );
  openssl(
    [
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "server.crt",
      ...days,
      "-extfile",
      "server.ext",
    ],
    dir,
  );
  cached = {
    dir,
    caCert: readFileSync(join(dir, "ca.crt"), "utf8"),
    caKeyPath: join(dir, "ca.key"),
    caCertPath: join(dir, "ca.crt"),
    serverCert: readFileSync(join(dir, "server.crt"), "utf8"),
    serverKey: readFileSync(join(dir, "server.key"), "utf8"),
  };
  return cached;
}

export function clientCert(username: string, groups: string[]): { cert: string; key: string } {
  const id = JSON.stringify([username, groups]);
  const hit = clientCache.get(id);
  if (hit) return hit;
  const p = pki();
  const base = `client-${clientCache.size}`;
  const esc = (s: string) => s.replace(/[/\\=+,]/g, (ch) => `\\${ch}`);
  const subject = `/CN=${esc(username)}${groups.map((g) => `/O=${esc(g)}`).join("")}`;
  openssl(
    [
      "req",
      "-newkey",
      ...EC_KEY,
      "-nodes",
      "-keyout",
      `${base}.key`,
      "-out",
      `${base}.csr`,
      "-subj",
      subject,
    ],
    p.dir,
  );
  writeFileSync(join(p.dir, `${base}.ext`), "extendedKeyUsage=clientAuth\n");
  openssl(
    [
      "x509",
      "-req",
      "-in",
      `${base}.csr`,
      "-CA",
      p.caCertPath,
      "-CAkey",
      p.caKeyPath,
      "-CAcreateserial",
      "-out",
      `${base}.crt`,
      "-days",
      "2",
      "-extfile",
      `${base}.ext`,
    ],
    p.dir,
  );
  const out = {
    cert: readFileSync(join(p.dir, `${base}.crt`), "utf8"),
    key: readFileSync(join(p.dir, `${base}.key`), "utf8"),
  };
  clientCache.set(id, out);
  return out;
}

/** Key material the real control plane needs beyond the CA (test/cluster/real/). */
export const signedBy = {
  /** The ServiceAccount token signing key pair (ES256). */
  serviceAccountKey(): { key: string; pub: string } {
    const p = pki();
    openssl(["ecparam", "-genkey", "-name", "prime256v1", "-noout", "-out", "sa.key"], p.dir);
    openssl(["ec", "-in", "sa.key", "-pubout", "-out", "sa.pub"], p.dir);
    return {
      key: readFileSync(join(p.dir, "sa.key"), "utf8"),
      pub: readFileSync(join(p.dir, "sa.pub"), "utf8"),
    };
  },
  /** A CA of its own for the authenticating proxy, and the proxy's client certificate (CN=front-proxy). */
  frontProxy(): { ca: string; cert: string; key: string } {
    const p = pki();
    const days = ["-days", "2"];
    openssl(
      [
        "req",
        "-x509",
        "-newkey",
        ...EC_KEY,
        "-nodes",
        "-keyout",
        "fp-ca.key",
        "-out",
        "fp-ca.crt",
        ...days,
        "-subj",
        "/CN=aicr-front-proxy-ca",
      ],
      p.dir,
    );
    openssl(
      [
        "req",
        "-newkey",
        ...EC_KEY,
        "-nodes",
        "-keyout",
        "fp.key",
        "-out",
        "fp.csr",
        "-subj",
        "/CN=front-proxy",
      ],
      p.dir,
    );
    writeFileSync(join(p.dir, "fp.ext"), "extendedKeyUsage=clientAuth\n");
    openssl(
      [
        "x509",
        "-req",
        "-in",
        "fp.csr",
        "-CA",
        "fp-ca.crt",
        "-CAkey",
        "fp-ca.key",
        "-CAcreateserial",
        "-out",
        "fp.crt",
        ...days,
        "-extfile",
        "fp.ext",
      ],
      p.dir,
    );
    const read = (f: string) => readFileSync(join(p.dir, f), "utf8");
    return { ca: read("fp-ca.crt"), cert: read("fp.crt"), key: read("fp.key") };
  },
};

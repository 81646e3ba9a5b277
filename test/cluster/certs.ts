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

/** The process's CA as files, for a signing step. */
const caFiles = (): Record<string, string> => {
  const p = pki();
  return { "ca.crt": p.caCert, "ca.key": p.caKey };
};

export function pki(): Pki {
  if (cached) return cached;
  cached = inScratch({}, makePki);
  return cached;
}

function makePki(dir: string): Pki {
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
  return {
    caCert: readFileSync(join(dir, "ca.crt"), "utf8"),
    caKey: readFileSync(join(dir, "ca.key"), "utf8"),
    serverCert: readFileSync(join(dir, "server.crt"), "utf8"),
    serverKey: readFileSync(join(dir, "server.key"), "utf8"),
  };
}

export function clientCert(username: string, groups: string[]): { cert: string; key: string } {
  const id = JSON.stringify([username, groups]);
  const hit = clientCache.get(id);
  if (hit) return hit;
  const esc = (s: string) => s.replace(/[/\\=+,]/g, (ch) => `\\${ch}`);
  const subject = `/CN=${esc(username)}${groups.map((g) => `/O=${esc(g)}`).join("")}`;
  const out = inScratch({ ...caFiles(), "client.ext": "extendedKeyUsage=clientAuth\n" }, (dir) => {
    openssl(
      [
        "req",
        "-newkey",
        ...EC_KEY,
        "-nodes",
        "-keyout",
        "client.key",
        "-out",
        "client.csr",
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
        "client.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "client.crt",
        "-days",
        "2",
        "-extfile",
        "client.ext",
      ],
      dir,
    );
    return {
      cert: readFileSync(join(dir, "client.crt"), "utf8"),
      key: readFileSync(join(dir, "client.key"), "utf8"),
    };
  });
  clientCache.set(id, out);
  return out;
}

/** Key material the real control plane needs beyond the CA (test/cluster/real/). */
export const signedBy = {
  /** The ServiceAccount token signing key pair (ES256). */
  serviceAccountKey(): { key: string; pub: string } {
    return inScratch({}, (dir) => {
      openssl(["ecparam", "-genkey", "-name", "prime256v1", "-noout", "-out", "sa.key"], dir);
      openssl(["ec", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir);
      return {
        key: readFileSync(join(dir, "sa.key"), "utf8"),
        pub: readFileSync(join(dir, "sa.pub"), "utf8"),
      };
    });
  },
  /** A CA of its own for the authenticating proxy, and the proxy's client certificate (CN=front-proxy). */
  frontProxy(): { ca: string; cert: string; key: string } {
    const days = ["-days", "2"];
    return inScratch({ "fp.ext": "extendedKeyUsage=clientAuth\n" }, (dir) => {
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
        dir,
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
        dir,
      );
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
        dir,
      );
      const read = (f: string) => readFileSync(join(dir, f), "utf8");
      return { ca: read("fp-ca.crt"), cert: read("fp.crt"), key: read("fp.key") };
    });
  },
};

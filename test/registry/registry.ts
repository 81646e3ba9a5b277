/**
 * A real registry for the push tests: Debian's docker-registry (distribution 2.8) on a free
 * loopback port, filesystem storage in a temp dir, optionally TLS (the test CA of
 * test/cluster/certs.ts), htpasswd (bcrypt) or token auth (test/registry/token-server.ts).
 * `npm run prereqs` (the first step of `npm test`) installs it.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pki } from "../cluster/certs.ts";
import { until } from "../support/until.ts";
import {
  startTokenServer,
  TOKEN_ISSUER,
  TOKEN_SERVICE,
  type TokenServer,
  type TokenServerOptions,
} from "./token-server.ts";

export const REGISTRY_BIN = "/usr/bin/docker-registry";

export interface RegistryOptions {
  tls?: boolean;
  /** Basic auth through an htpasswd file. */
  htpasswd?: { user: string; password: string };
  /** Bearer auth through a token service (needs `htpasswd`-style user and password for it). */
  token?: Omit<TokenServerOptions, "dir" | "tls">;
}

export interface Registry {
  /** 127.0.0.1:<port> */
  host: string;
  url: string;
  caFile: string;
  caPem: string;
  user?: string | undefined;
  password?: string | undefined;
  tokenServer?: TokenServer | undefined;
  /** The registry's own log (JSON lines) so far. */
  log(): string;
  stop(): Promise<void>;
}

function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/**
 * docker-registry's config.yml for storage in `<dir>/data` on 127.0.0.1:`port`: with `tls`, the test
 * CA's server certificate (written into `dir`); with `htpasswd`, `<dir>/htpasswd` (the caller writes it);
 * with a token `realm` and `bundle`, Bearer auth. Shared with the real node's registries.
 */
export function registryConfig(
  dir: string,
  port: number,
  o: RegistryOptions,
  realm?: string,
  bundle?: string,
): string {
  const p = pki();
  const lines = [
    "version: 0.1",
    "log:",
    "  level: info",
    "  formatter: json",
    "  accesslog:",
    "    disabled: true",
    "storage:",
    "  filesystem:",
    `    rootdirectory: ${join(dir, "data")}`,
    "  maintenance:",
    "    uploadpurging:",
    "      enabled: false",
    "http:",
    `  addr: 127.0.0.1:${port}`,
    `  secret: ${crypto.randomUUID()}`,
  ];
  if (o.tls) {
    writeFileSync(join(dir, "server.crt"), p.serverCert);
    writeFileSync(join(dir, "server.key"), p.serverKey, { mode: 0o600 });
    lines.push(
      "  tls:",
      `    certificate: ${join(dir, "server.crt")}`,
      `    key: ${join(dir, "server.key")}`,
    );
  }
  if (o.htpasswd) {
    lines.push("auth:", "  htpasswd:", "    realm: aicr-test", `    path: ${join(dir, "htpasswd")}`);
  } else if (realm && bundle) {
    lines.push("auth:", "  token:", `    realm: ${realm}`, `    service: ${TOKEN_SERVICE}`);
    lines.push(`    issuer: ${TOKEN_ISSUER}`, `    rootcertbundle: ${bundle}`);
  }
  return `${lines.join("\n")}\n`;
}

async function waitUntilUp(url: string, ca: string, proc: Bun.Subprocess, log: () => string): Promise<void> {
  const state = await until(
    async () => {
      if (proc.exitCode !== null) return "exited";
      const res = await fetch(`${url}/v2/`, { tls: { ca } }); // throws until it listens
      await res.arrayBuffer();
      return (res.status === 200 || res.status === 401) && "up";
    },
    () => `docker-registry to answer ${url}/v2/:\n${log()}`,
    { everyMs: 50 },
  );
  if (state === "exited") throw new Error(`docker-registry exited (${proc.exitCode}):\n${log()}`);
}

export async function startRegistry(o: RegistryOptions = {}): Promise<Registry> {
  if (!existsSync(REGISTRY_BIN)) {
    throw new Error(`${REGISTRY_BIN} is missing: run \`npm run prereqs\` (installs the host packages)`);
  }
  const p = pki();
  const dir = mkdtempSync(join(tmpdir(), "aicr-registry-"));
  writeFileSync(join(dir, "ca.crt"), p.caCert);
  const creds = o.htpasswd ?? o.token;
  if (o.htpasswd) {
    // cost 4: the registry checks the hash on every request; the default cost (10) takes ~70 ms each
    const hash = await Bun.password.hash(o.htpasswd.password, { algorithm: "bcrypt", cost: 4 });
    writeFileSync(join(dir, "htpasswd"), `${o.htpasswd.user}:${hash}\n`);
  }
  const tokenServer = o.token
    ? startTokenServer({ ...o.token, dir, tls: o.tls ? { cert: p.serverCert, key: p.serverKey } : undefined })
    : undefined;
  const port = freePort();
  writeFileSync(
    join(dir, "config.yml"),
    registryConfig(dir, port, o, tokenServer?.realm, tokenServer?.certFile),
  );
  let text = "";
  const proc = Bun.spawn([REGISTRY_BIN, "serve", join(dir, "config.yml")], {
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir },
  });
  const dec = new TextDecoder();
  const pump = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) text += dec.decode(chunk, { stream: true });
  };
  const pumped = Promise.all([pump(proc.stdout), pump(proc.stderr)]);
  const url = `${o.tls ? "https" : "http"}://127.0.0.1:${port}`;
  try {
    await waitUntilUp(url, p.caCert, proc, () => text);
  } catch (err) {
    proc.kill();
    await proc.exited;
    tokenServer?.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    host: `127.0.0.1:${port}`,
    url,
    caFile: join(dir, "ca.crt"),
    caPem: p.caCert,
    user: creds?.user,
    password: creds?.password,
    tokenServer,
    log: () => text,
    async stop() {
      proc.kill();
      await proc.exited;
      await pumped.catch(() => undefined);
      tokenServer?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

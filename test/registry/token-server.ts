/**
 * A token service for the registry's `auth.token` mode: checks basic credentials, grants the
 * requested repository actions (minus any denied), and signs an ES256 JWT whose x5c header carries
 * a self-signed certificate the registry trusts through its rootcertbundle.
 */
import { createPrivateKey, sign } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const TOKEN_SERVICE = "aicr-test-registry";
export const TOKEN_ISSUER = "aicr-test-issuer";

export interface TokenServerOptions {
  dir: string;
  user: string;
  password: string;
  tls?: { cert: string; key: string } | undefined;
  /** Answer `access_token` only (the OAuth2 spelling) instead of `token`. */
  accessTokenOnly?: boolean;
  /** Repositories the user may pull but not push. */
  readOnly?: string[];
  /** An OAuth2 refresh token (Docker's identitytoken) accepted for `user` in a POST grant. */
  refreshToken?: string;
}

export interface TokenServer {
  realm: string;
  /** The certificate the registry must trust (rootcertbundle). */
  certFile: string;
  /** Every token request: how, the user it authenticated (or "" for anonymous), the scopes asked. */
  requests: { method: string; user: string; scopes: string[]; status: number }[];
  /** Changeable between tests. */
  options: TokenServerOptions;
  stop(): void;
}

const b64url = (data: Uint8Array | string): string => Buffer.from(data).toString("base64url");

function openssl(args: string[], cwd: string): void {
  const res = Bun.spawnSync(["openssl", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (res.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${res.stderr.toString()}`);
}

function grant(
  scope: string,
  authed: boolean,
  readOnly: string[],
): { type: string; name: string; actions: string[] } {
  const first = scope.indexOf(":");
  const last = scope.lastIndexOf(":");
  const type = scope.slice(0, first);
  const name = scope.slice(first + 1, last);
  const asked = scope.slice(last + 1).split(",");
  const allowed = !authed ? [] : readOnly.includes(name) ? ["pull"] : ["pull", "push"];
  return { type, name, actions: asked.filter((a) => allowed.includes(a)) };
}

export function startTokenServer(o: TokenServerOptions): TokenServer {
  openssl(
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"].concat([
      "-keyout",
      "token.key",
      "-out",
      "token.crt",
      "-days",
      "2",
      "-subj",
      "/CN=aicr-test-token-signer",
    ]),
    o.dir,
  );
  const key = createPrivateKey(readFileSync(join(o.dir, "token.key")));
  const certPem = readFileSync(join(o.dir, "token.crt"), "utf8");
  const der = certPem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  const requests: TokenServer["requests"] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    ...(o.tls ? { tls: o.tls } : {}),
    async fetch(req) {
      const url = new URL(req.url);
      const form = req.method === "POST" ? new URLSearchParams(await req.text()) : url.searchParams;
      const scopes =
        req.method === "POST" ? (form.get("scope") ?? "").split(" ").filter(Boolean) : form.getAll("scope");
      const auth = req.headers.get("authorization") ?? "";
      const refused = (u: string) => {
        requests.push({ method: req.method, user: u, scopes, status: 401 });
        return Response.json({ details: "invalid credentials" }, { status: 401 });
      };
      let user = "";
      if (req.method === "POST") {
        if (
          form.get("grant_type") !== "refresh_token" ||
          !o.refreshToken ||
          form.get("refresh_token") !== o.refreshToken
        )
          return refused("");
        user = o.user;
      } else if (auth.startsWith("Basic ")) {
        const [u, ...p] = Buffer.from(auth.slice(6), "base64").toString("utf8").split(":");
        if (u !== o.user || p.join(":") !== o.password) return refused(u ?? "");
        user = u;
      }
      const now = Math.floor(Date.now() / 1000);
      const header = { typ: "JWT", alg: "ES256", x5c: [der] };
      const claims = {
        iss: TOKEN_ISSUER,
        sub: user,
        aud: form.get("service") ?? "",
        exp: now + 600,
        nbf: now - 60,
        iat: now,
        jti: crypto.randomUUID(),
        access: scopes.map((s) => grant(s, user !== "", o.readOnly ?? [])),
      };
      const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
      const signature = sign("sha256", Buffer.from(input), { key, dsaEncoding: "ieee-p1363" });
      const token = `${input}.${b64url(signature)}`;
      requests.push({ method: req.method, user, scopes, status: 200 });
      return Response.json(
        o.accessTokenOnly ? { access_token: token, expires_in: 600 } : { token, expires_in: 600 },
      );
    },
  });
  const scheme = o.tls ? "https" : "http";
  return {
    realm: `${scheme}://127.0.0.1:${server.port}/token`,
    certFile: join(o.dir, "token.crt"),
    requests,
    options: o,
    stop: () => void server.stop(true),
  };
}

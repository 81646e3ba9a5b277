/**
 * Where a push's credentials come from when --username is not given: $DOCKER_CONFIG/config.json
 * (inline auths, identity tokens, credHelpers, credsStore), with a fake docker-credential-test
 * helper on PATH; and a push against a real registry with each.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AicrError } from "../../src/core/errors.ts";
import { createLogger } from "../../src/core/log.ts";
import { resolveCredentials } from "../../src/image/registry/credentials.ts";
import { buildTestArchive } from "../registry/archive.ts";
import { pushTo } from "../registry/helpers.ts";
import { type Registry, startRegistry } from "../registry/registry.ts";

const root = mkdtempSync(join(tmpdir(), "aicr-docker-config-"));
const bin = join(root, "bin");
mkdirSync(bin);
let reg: Registry;

beforeAll(async () => {
  reg = await startRegistry({ tls: true, htpasswd: { user: "erin", password: "pw-erin" } });
}, 60_000);
afterAll(async () => {
  await reg?.stop();
  rmSync(root, { recursive: true, force: true });
}, 30_000);

/** A credential helper that records the server it was asked about and answers from a table. */
function helper(name: string, table: Record<string, { Username: string; Secret: string }>): string {
  const asked = join(root, `${name}.asked`);
  const script = `#!/bin/sh
read -r server
printf '%s' "$server" > '${asked}'
case "$server" in
${Object.entries(table)
  .map(([s, c]) => `  '${s}') printf '%s' '${JSON.stringify({ ServerURL: s, ...c })}' ;;`)
  .join("\n")}
  *) echo "credentials not found in native keychain"; exit 1 ;;
esac
`;
  writeFileSync(join(bin, `docker-credential-${name}`), script);
  chmodSync(join(bin, `docker-credential-${name}`), 0o755);
  return asked;
}

function dockerConfig(config: unknown): Record<string, string> {
  const dir = mkdtempSync(join(root, "cfg-"));
  writeFileSync(join(dir, "config.json"), JSON.stringify(config));
  return { DOCKER_CONFIG: dir, PATH: `${bin}:${process.env.PATH}`, HOME: root };
}

const lines: string[] = [];
const resolve = (registry: string, env: Record<string, string>) =>
  resolveCredentials({
    registry,
    env,
    signal: new AbortController().signal,
    log: createLogger({ write: (l) => void lines.push(l) }),
  });
const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("docker config.json", () => {
  test("an inline auth, keyed with or without a scheme", async () => {
    const env = dockerConfig({
      auths: { "https://r.example.com:5000/v1/": { auth: b64("u:p:with:colons") } },
    });
    expect(await resolve("r.example.com:5000", env)).toEqual({
      kind: "basic",
      username: "u",
      password: "p:with:colons",
      source: join(env.DOCKER_CONFIG!, "config.json"),
    });
    expect(await resolve("other.example.com", env)).toBeUndefined();
  });

  test("an identity token", async () => {
    const env = dockerConfig({ auths: { "r.example.com": { auth: b64("u:"), identitytoken: "refresh" } } });
    expect(await resolve("r.example.com", env)).toMatchObject({ kind: "identity-token", token: "refresh" });
  });

  test("credHelpers for the host wins; the helper is asked about the host", async () => {
    const asked = helper("test", { "r.example.com": { Username: "hu", Secret: "hs" } });
    const env = dockerConfig({
      credHelpers: { "r.example.com": "test" },
      auths: { "r.example.com": { auth: b64("inline:nope") } },
    });
    expect(await resolve("r.example.com", env)).toMatchObject({
      kind: "basic",
      username: "hu",
      password: "hs",
    });
    expect(readFileSync(asked, "utf8")).toBe("r.example.com");
  });

  test("a credsStore without the entry falls back to auths; <token> means an identity token", async () => {
    helper("store", { "tok.example.com": { Username: "<token>", Secret: "idt" } });
    const env = dockerConfig({ credsStore: "store", auths: { "r.example.com": { auth: b64("a:b") } } });
    expect(await resolve("r.example.com", env)).toMatchObject({ username: "a", password: "b" });
    expect(await resolve("tok.example.com", env)).toMatchObject({ kind: "identity-token", token: "idt" });
  });

  test("a missing credsStore is a warning; a missing per-host helper is an error", async () => {
    const loose = dockerConfig({ credsStore: "desktop", auths: { "r.example.com": { auth: b64("a:b") } } });
    expect(await resolve("r.example.com", loose)).toMatchObject({ username: "a" });
    expect(lines.join("")).toContain('Ignoring credsStore "desktop"');
    const strict = dockerConfig({ credHelpers: { "r.example.com": "missing" } });
    const err = (await resolve("r.example.com", strict).catch((e) => e)) as AicrError;
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toContain('"docker-credential-missing", which is not on PATH');
  });

  test("a broken config.json names the file", async () => {
    const dir = mkdtempSync(join(root, "bad-"));
    writeFileSync(join(dir, "config.json"), "{not json");
    const err = (await resolve("r.example.com", { DOCKER_CONFIG: dir }).catch((e) => e)) as AicrError;
    expect(err.message).toBe(
      `The Docker config "${join(dir, "config.json")}" is not valid JSON at line 1, column 2`,
    );
  });
});

describe("a push with stored credentials", () => {
  test("from config.json auths", async () => {
    const env = dockerConfig({ auths: { [reg.host]: { auth: b64("erin:pw-erin") } } });
    const credentials = await resolve(reg.host, env);
    const { result } = await pushTo(`${reg.host}/cfg/aicr`, buildTestArchive(), {
      ca: reg.caPem,
      credentials,
    });
    expect(result.uploaded.blobs).toBeGreaterThan(0);
  }, 60_000);

  test("from a credential helper; a stale stored password names its source", async () => {
    helper("reg", { [reg.host]: { Username: "erin", Secret: "pw-erin" } });
    const credentials = await resolve(reg.host, dockerConfig({ credHelpers: { [reg.host]: "reg" } }));
    const { result } = await pushTo(`${reg.host}/helper/aicr`, buildTestArchive(), {
      ca: reg.caPem,
      credentials,
    });
    expect(result.uploaded.blobs).toBeGreaterThan(0);

    const stale = await resolve(reg.host, dockerConfig({ auths: { [reg.host]: { auth: b64("erin:old") } } }));
    const err = (await pushTo(`${reg.host}/helper/aicr`, buildTestArchive(), {
      ca: reg.caPem,
      credentials: stale,
    }).catch((e) => e)) as AicrError;
    expect(err.code).toBe("UNAUTHORIZED");
    expect(err.remedy).toContain(`docker login ${reg.host}" again`);
  }, 60_000);
});

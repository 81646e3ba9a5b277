/**
 * `aicr image verify` as an operator runs it (the compiled binary): an archive and, after `aicr image
 * push` of it, the registry copy (Debian's docker-registry, TLS with a private CA, htpasswd). The
 * report on stdout — text, or JSON also when verification fails —, the reason on stderr, and the
 * exit status: 0 verified, 4 not verified, 2 a bad key or flag, 3 an image the registry lacks. The
 * password never appears in the output.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { readOciArchive } from "../../src/image/_archive.ts";
import { layoutArchive } from "../../src/image/_layout.ts";
import { readTar } from "../../src/image/_tar.ts";
import { signArchive } from "../../src/image/sign/sign-archive.ts";
import { newKey, testImage, writeFiles } from "../image/_verify-fixtures.ts";
import { type Registry, startRegistry } from "../registry/registry.ts";
import { aicr, baseEnv } from "./_aicr.ts";

const PASSWORD = "e2e-Verify-Secret-9";
const key = newKey();
const other = newKey();
const image = testImage();
const signed = signArchive(image.archive, key.signing).bytes;

function tampered(): Uint8Array {
  const layer = readOciArchive(signed).images[0]!.manifest.layers[0]!.digest;
  const files = readTar(signed).flatMap((m) => (m.type === "file" ? [{ path: m.path, data: m.data }] : []));
  const f = files.find((x) => x.path === `blobs/sha256/${layer.slice(7)}`)!;
  f.data = Uint8Array.from(f.data);
  f.data[0] = f.data[0]! ^ 0xff;
  return layoutArchive({ files });
}

const files = writeFiles({
  "signed.tar": signed,
  "tampered.tar": tampered(),
  "key.pub": key.pub,
  "key.pem": key.priv,
  "other.pub": other.pub,
});
let reg: Registry;

beforeAll(async () => {
  reg = await startRegistry({ tls: true, htpasswd: { user: "olga", password: PASSWORD } });
}, 60_000);
afterAll(async () => {
  await reg?.stop();
  rmSync(files.dir, { recursive: true, force: true });
}, 30_000);

const env = () => baseEnv({ HOME: files.dir });
const verify = (args: string[], stdin?: string) =>
  aicr(["image", "verify", ...args], { env: env(), ...(stdin !== undefined ? { stdin } : {}) });

describe("an archive", () => {
  test("verified: one line per check and the summary on stdout, exit 0", async () => {
    const r = await verify([files["signed.tar"]!, "--key", files["key.pub"]!]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(10);
    expect(lines.slice(0, 9).every((l) => l.startsWith("OK "))).toBe(true);
    expect(lines[9]).toStartWith(`Verified ${files["signed.tar"]} (${image.root}) with key sha256:`);
    expect(lines[9]).toEndWith(": all 9 checks passed");
  }, 60_000);

  test("-o json: the report", async () => {
    const r = await verify([files["signed.tar"]!, "--key", files["key.pub"]!, "-o", "json"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ reference: files["signed.tar"], digest: image.root, ok: true });
    expect(report.key.fingerprint).toMatch(/^sha256:[a-f0-9]{64}$/);
    expect(report.checks).toHaveLength(9);
  }, 60_000);

  test("a tampered layer: the JSON report still printed, the reason on stderr, exit 4", async () => {
    const r = await verify([files["tampered.tar"]!, "--key", files["key.pub"]!, "-o", "json"]);
    expect(r.code).toBe(4);
    const report = JSON.parse(r.stdout);
    expect(report.ok).toBe(false);
    expect(report.checks[0].reason).toMatch(/^layer sha256:[a-f0-9]{64} has digest sha256:[a-f0-9]{64}$/);
    expect(r.stderr).toContain("[UNAUTHORIZED]");
    expect(r.stderr).toContain(`did not verify: ${report.checks[0].reason}`);
  }, 60_000);

  test("another key: exit 4, every failing line says no signature by this key", async () => {
    const r = await verify([files["signed.tar"]!, "--key", files["other.pub"]!]);
    expect(r.code).toBe(4);
    const failing = r.stdout.split("\n").filter((l) => l.startsWith("FAIL"));
    expect(failing).toHaveLength(7);
    expect(r.stdout).toContain(`no signature by this key for ${image.root} (one signature, by another key)`);
  }, 60_000);

  test("the private key given: exit 2 before anything is read, the key never echoed", async () => {
    const r = await verify([files["signed.tar"]!, "--key", files["key.pem"]!]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("a private key");
    expect(r.stderr).not.toContain(key.priv.split("\n")[1]!);
  }, 60_000);
});

describe("after aicr image push, the registry copy", () => {
  const ref = () => `${reg.host}/team/aicr:v1`;
  const login = () => ["--ca-file", reg.caFile, "--username", "olga", "--password-stdin"];

  beforeAll(async () => {
    const r = await aicr(["image", "push", files["signed.tar"]!, ref(), ...login()], {
      env: env(),
      stdin: PASSWORD,
    });
    expect(r.stderr).toContain("referrers");
    expect(r.code).toBe(0);
  }, 60_000);

  test("by tag and by the digest push printed: exit 0", async () => {
    const byTag = await verify([ref(), "--key", files["key.pub"]!, ...login()], PASSWORD);
    expect(byTag.code).toBe(0);
    expect(byTag.stdout).toContain(`Verified ${ref()} (${image.root})`);
    const byDigest = await verify(
      [`${reg.host}/team/aicr@${image.root}`, "--key", files["key.pub"]!, "-o", "json", ...login()],
      PASSWORD,
    );
    expect(byDigest.code).toBe(0);
    expect(JSON.parse(byDigest.stdout).checks).toHaveLength(9);
    for (const out of [byTag, byDigest]) expect(out.stdout + out.stderr).not.toContain(PASSWORD);
  }, 60_000);

  test("an image the registry lacks: exit 3, nothing on stdout", async () => {
    const r = await verify([`${reg.host}/team/aicr:v9`, "--key", files["key.pub"]!, ...login()], PASSWORD);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`${reg.host}/team/aicr:v9 is not in the registry`);
  }, 60_000);

  test("another key: exit 4", async () => {
    const r = await verify([ref(), "--key", files["other.pub"]!, ...login()], PASSWORD);
    expect(r.code).toBe(4);
  }, 60_000);
});

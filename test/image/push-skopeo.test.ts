/**
 * Interop with skopeo (containers/image), both ways, on a real TLS registry with basic auth: what
 * skopeo pushed from the archive our push finds complete (nothing uploaded), and what our push
 * stored skopeo reads back with the same digest.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Digest } from "../../src/image/_oci.ts";
import { buildTestArchive } from "../registry/archive.ts";
import { basic, pushTo, writeArchive } from "../registry/helpers.ts";
import { type Registry, startRegistry } from "../registry/registry.ts";

const SKOPEO = "/usr/bin/skopeo";
const USER = "frank";
const PASSWORD = "pw-frank";
let reg: Registry;
const home = mkdtempSync(join(tmpdir(), "aicr-skopeo-"));
const certDir = join(home, "certs");

beforeAll(async () => {
  if (!existsSync(SKOPEO))
    throw new Error(`${SKOPEO} is missing: run \`npm run prereqs\` (installs the host packages)`);
  reg = await startRegistry({ tls: true, htpasswd: { user: USER, password: PASSWORD } });
  mkdirSync(certDir, { recursive: true });
  writeFileSync(join(certDir, "ca.crt"), reg.caPem);
}, 60_000);
afterAll(async () => {
  await reg?.stop();
  rmSync(home, { recursive: true, force: true });
}, 30_000);

async function skopeo(args: string[]): Promise<string> {
  const proc = Bun.spawn([SKOPEO, "--insecure-policy", ...args], {
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, TMPDIR: home },
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`skopeo ${args[0]} failed (${code}): ${err}`);
  return out;
}

describe("skopeo interop", () => {
  test("after skopeo copied the archive's image (by its tag: index.json lists referrers too), our push uploads only the referrers' blobs", async () => {
    const archive = buildTestArchive({ tag: "v1", referrers: true });
    const referrerBlobs = new Set(archive.referrers.flatMap((a) => a.blobs.map((b) => b.digest)));
    const path = writeArchive(archive, home);
    await skopeo([
      "copy",
      "--all",
      "--preserve-digests",
      "--dest-cert-dir",
      certDir,
      "--dest-creds",
      `${USER}:${PASSWORD}`,
      `oci-archive:${path}:v1`,
      `docker://${reg.host}/sk/aicr:v1`,
    ]);
    const { result } = await pushTo(`${reg.host}/sk/aicr`, archive, {
      ca: reg.caPem,
      credentials: basic(USER, PASSWORD),
    });
    expect(result.uploaded.blobs).toBe(referrerBlobs.size);
    expect(result.skipped.blobs).toBe(archive.blobs.size);
    expect(result.manifests).toEqual({ put: 1, skipped: 2 });
    expect(result.referrers).toMatchObject({ count: 8, put: 8, via: "tag-scheme" });
  }, 120_000);

  test("what our push stored, skopeo reads back with the archive's digest", async () => {
    const archive = buildTestArchive({ tag: "v2" });
    await pushTo(`${reg.host}/sk/ours`, archive, { ca: reg.caPem, credentials: basic(USER, PASSWORD) });
    const raw = await skopeo([
      "inspect",
      "--raw",
      "--cert-dir",
      certDir,
      "--creds",
      `${USER}:${PASSWORD}`,
      `docker://${reg.host}/sk/ours:v2`,
    ]);
    expect(sha256Digest(raw)).toBe(archive.digest);
    const config = JSON.parse(
      await skopeo([
        "inspect",
        "--config",
        "--override-arch",
        "arm64",
        "--cert-dir",
        certDir,
        "--creds",
        `${USER}:${PASSWORD}`,
        `docker://${reg.host}/sk/ours:v2`,
      ]),
    ) as { architecture: string };
    expect(config.architecture).toBe("arm64");
  }, 120_000);
});

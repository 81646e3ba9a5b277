/**
 * npm run image with a signing key, as a publisher runs it: `--key <pem>` and `AICR_SIGNING_KEY`
 * give the same bytes (archive, SHA256SUMS, SHA256SUMS.sig, the image's SBOMs and provenance);
 * the archive carries a cosign signature of the index, both platform manifests and their four
 * documents, and `aicr image verify` passes it; SHA256SUMS.sig verifies with the README's openssl
 * command; the SBOMs and provenance are the unsigned build's. Then an unsigned run restores dist/
 * (the other suites expect it) and removes SHA256SUMS.sig, whose sums it changed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt } from "../e2e/_aicr.ts";
import { ARCHIVE, DIST, ensureImage, LAYOUT, ROOT, sha256, VERSION } from "./_image.ts";

const SIGNATURE = "application/vnd.dev.cosign.artifact.sig.v1+json";
const DOCUMENTS = ["amd64", "arm64"].flatMap((arch) => [
  `aicr-image-${VERSION}.linux-${arch}.spdx.json`,
  `aicr-image-${VERSION}.linux-${arch}.provenance.json`,
]);
const OUTPUTS = [`aicr-image-${VERSION}.tar`, "SHA256SUMS", "SHA256SUMS.sig", ...DOCUMENTS];
const BUILD_MS = 240_000;

let work: string;
let key: string;
let pub: string;
let unsigned: Map<string, string>;

async function image(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawn([process.execPath, join(ROOT, "scripts/image.ts"), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  if (code !== 0) throw new Error(`npm run image ${args.join(" ")} exited ${code}:\n${stdout}${stderr}`);
  return { stdout, stderr };
}

/** SHA-256 of each output that exists ("absent" otherwise). */
async function digests(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const f of OUTPUTS) {
    const path = join(DIST, f);
    out.set(f, existsSync(path) ? sha256(new Uint8Array(await readFile(path))) : "absent");
  }
  return out;
}

async function spawn(argv: string[]) {
  const p = Bun.spawn(argv, { cwd: work, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, out: `${stdout}${stderr}` };
}

beforeAll(async () => {
  await Promise.all([ensureImage(), ensureBuilt()]);
  work = await mkdtemp(join(tmpdir(), "aicr-image-signed-"));
  const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
  key = join(work, "aicr.key");
  pub = join(work, "aicr.pub");
  await writeFile(key, pair.privateKey.export({ format: "pem", type: "sec1" }), { mode: 0o600 });
  await writeFile(pub, pair.publicKey.export({ format: "pem", type: "spki" }));
  unsigned = await digests();
}, BUILD_MS);

afterAll(async () => {
  try {
    if (work) await image([]);
    const restored = await digests();
    // the unsigned image again, and no signature left beside sums it no longer signs
    expect(restored.get(`aicr-image-${VERSION}.tar`)).toBe(unsigned.get(`aicr-image-${VERSION}.tar`));
    expect(restored.get("SHA256SUMS.sig")).toBe("absent");
  } finally {
    if (work) await rm(work, { recursive: true, force: true });
  }
}, BUILD_MS);

test(
  "npm run image --key signs the archive and SHA256SUMS; AICR_SIGNING_KEY gives the same bytes",
  async () => {
    expect(unsigned.get("SHA256SUMS.sig")).toBe("absent");
    const first = await image(["--key", key]);
    expect(first.stdout).toContain("signed 7 manifests for ");
    const signed = await digests();
    await image([], { AICR_SIGNING_KEY: key });
    expect(await digests()).toEqual(signed);

    // signing adds signatures only: the documents are the unsigned build's, the archive is not
    for (const f of DOCUMENTS) expect([f, signed.get(f)]).toEqual([f, unsigned.get(f)]);
    expect(signed.get(`aicr-image-${VERSION}.tar`)).not.toBe(unsigned.get(`aicr-image-${VERSION}.tar`));
    const index = JSON.parse(await readFile(join(LAYOUT, "index.json"), "utf8")) as {
      manifests: { artifactType?: string }[];
    };
    expect(index.manifests.filter((d) => d.artifactType === SIGNATURE)).toHaveLength(7);
    const sums = await readFile(join(DIST, "SHA256SUMS"), "utf8");
    expect(sums).toContain(
      `${signed.get(`aicr-image-${VERSION}.tar`)?.slice(7)}  aicr-image-${VERSION}.tar\n`,
    );
  },
  BUILD_MS,
);

test("the signed build verifies: aicr image verify on the archive, openssl on SHA256SUMS.sig (README's commands)", async () => {
  const verified = await spawn([join(DIST, "aicr"), "image", "verify", ARCHIVE, "--key", pub]);
  expect([verified.code, verified.out]).toEqual([0, expect.stringContaining("all 9 checks passed")]);
  const sig = join(work, "SHA256SUMS.der");
  await writeFile(sig, Buffer.from(await readFile(join(DIST, "SHA256SUMS.sig"), "utf8"), "base64"));
  const openssl = await spawn([
    "openssl",
    "dgst",
    "-sha256",
    "-verify",
    pub,
    "-signature",
    sig,
    join(DIST, "SHA256SUMS"),
  ]);
  expect([openssl.code, openssl.out.trim()]).toEqual([0, "Verified OK"]);
  // another key's public half: refused
  const other = join(work, "other.pub");
  await writeFile(
    other,
    generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "pem", type: "spki" }),
  );
  expect(
    (
      await spawn([
        "openssl",
        "dgst",
        "-sha256",
        "-verify",
        other,
        "-signature",
        sig,
        join(DIST, "SHA256SUMS"),
      ])
    ).code,
  ).not.toBe(0);
  expect((await spawn([join(DIST, "aicr"), "image", "verify", ARCHIVE, "--key", other])).code).toBe(4);
});

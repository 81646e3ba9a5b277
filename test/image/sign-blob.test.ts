import { expect, test } from "bun:test";
import { generateKeyPairSync, verify } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSigningKey } from "../../src/image/sign/_keys.ts";
import { signBlob, verifyBlob } from "../../src/image/sign/blob.ts";
import { tool } from "../tools/tools.ts";

const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
const key = loadSigningKey(pair.privateKey.export({ format: "pem", type: "sec1" }) as string, {
  flag: "--key",
  path: "k",
});
const sums = new TextEncoder().encode(`${"ab".repeat(32)}  aicr-linux-x64\n`);

test("sign-blob's format: base64 of a DER signature over the bytes, no newline, the same every time", () => {
  const sig = signBlob(sums, key);
  expect(sig).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
  expect(
    verify("sha256", sums, { key: pair.publicKey, dsaEncoding: "der" }, Buffer.from(sig, "base64")),
  ).toBe(true);
  expect(signBlob(sums, key)).toBe(sig);
  expect(verifyBlob(sums, sig, key.verification)).toBe(true);
  expect(verifyBlob(sums, `${sig}\n`, key.verification)).toBe(true);
  expect(verifyBlob(new Uint8Array([...sums, 10]), sig, key.verification)).toBe(false);
});

const cosign = await tool("cosign");

test.skipIf(cosign.missing !== undefined)(
  `cosign verify-blob --key accepts the signature (SHA256SUMS.sig's format)${cosign.missing ? ` (skipped: ${cosign.missing})` : ""}`,
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "aicr-blob-"));
    try {
      writeFileSync(join(dir, "SHA256SUMS"), sums);
      writeFileSync(join(dir, "SHA256SUMS.sig"), signBlob(sums, key));
      writeFileSync(join(dir, "key.pub"), pair.publicKey.export({ format: "pem", type: "spki" }));
      const verifyBlob = async (file: string) => {
        const p = Bun.spawn(
          [
            cosign.path as string,
            "verify-blob",
            "--key",
            "key.pub",
            "--signature",
            "SHA256SUMS.sig",
            "--insecure-ignore-tlog=true",
            file,
          ],
          {
            cwd: dir,
            env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir },
            stdout: "pipe",
            stderr: "pipe",
          },
        );
        const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
        return { code, err };
      };
      const ok = await verifyBlob("SHA256SUMS");
      expect([ok.code, ok.err]).toEqual([0, expect.stringContaining("Verified OK")]);
      writeFileSync(join(dir, "tampered"), new Uint8Array([...sums, 10]));
      expect((await verifyBlob("tampered")).code).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  60_000,
);

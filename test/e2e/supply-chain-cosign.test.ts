/**
 * cosign (v2.6.5, built from the Go module proxy: test/tools) accepts what aicr signs, offline, with
 * the public key alone (no transparency log, an empty trusted root: it never reaches for Sigstore's):
 *
 *   - `cosign verify --key` of every signed manifest (the index, each platform manifest, each SBOM
 *     and provenance), through cosign's legacy `sha256-<hex>.sig` tag, from both test registries;
 *   - `cosign verify --key --experimental-oci11`: the OCI 1.1 referrer signatures (cosign's request
 *     log shows it read the referrer and never the .sig tag, which it would fall back to);
 *   - a key that did not sign is refused by cosign too;
 *   - `cosign verify-blob` of SHA256SUMS with a detached signature in aicr's format;
 *   - a key pair made by `cosign generate-key-pair` (an encrypted cosign key file) signs with `aicr
 *     image sign`, and both cosign and `aicr image verify` accept the result with cosign.pub.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ARTIFACT } from "../../src/image/_referrers.ts";
import { loadSigningKey } from "../../src/image/sign/_keys.ts";
import { signBlob } from "../../src/image/sign/blob.ts";
import { DIST, VERSION } from "../image/_image.ts";
import {
  cosignOffline,
  eachTarget,
  type KeyPair,
  ok,
  opensslKeyPair,
  type Pushed,
  pushedImage,
  run,
  signedCopy,
  type Target,
} from "../tools/supply-chain.ts";
import { tool } from "../tools/tools.ts";
import { aicr, baseEnv } from "./_aicr.ts";

const SETUP_MS = 180_000;
const cosign = await tool("cosign");
/** The repository the payloads name: the archive's io.containerd.image.name without its tag. */
const REPOSITORY = (
  JSON.parse(readFileSync(join(import.meta.dir, "../../package.json"), "utf8")) as {
    config: { imageRepository: string };
  }
).config.imageRepository;

/** The requests cosign --verbose logs ("--> GET http://…/v2/aicr/manifests/<ref>"): "GET /v2/…" each. */
const requests = (log: string): string[] =>
  [...log.matchAll(/--> (GET|HEAD) https?:\/\/[^/\s]+(\/v2\/\S+)/g)].map((m) => `${m[1]} ${m[2]}`);

describe.skipIf(cosign.missing !== undefined)(
  `cosign verifies aicr's signatures${cosign.missing ? ` (skipped: ${cosign.missing})` : ""}`,
  () => {
    let p: Pushed;
    let offline: ReturnType<typeof cosignOffline>;
    let stranger: KeyPair;
    beforeAll(async () => {
      p = await pushedImage();
      const home = join(p.work, "home");
      mkdirSync(home);
      offline = cosignOffline(home);
      stranger = await opensslKeyPair(p.work, "stranger");
    }, SETUP_MS);
    afterAll(() => p?.stop(), SETUP_MS);

    const verify = (args: string[]) =>
      run([cosign.path as string, "verify", ...offline.verify, "--allow-http-registry", ...args], {
        env: offline.env,
      });
    /** Every signed manifest: kind and digest. */
    const signed = () => [
      { kind: "index", digest: p.graph.root.digest },
      ...p.graph.platforms.flatMap(({ arch, descriptor }) => [
        { kind: `linux/${arch} manifest`, digest: descriptor.digest },
        { kind: `linux/${arch} SBOM`, digest: p.graph.only(descriptor.digest, ARTIFACT.spdx).digest },
        { kind: `linux/${arch} provenance`, digest: p.graph.only(descriptor.digest, ARTIFACT.intoto).digest },
      ]),
    ];
    const each = (name: string, fn: (t: Target) => Promise<void>) => eachTarget(() => p, name, fn);
    const payloads = (stdout: string) =>
      (
        JSON.parse(stdout) as {
          critical: { identity: Record<string, string>; image: Record<string, string> };
        }[]
      ).map((x) => ({
        reference: x.critical.identity["docker-reference"],
        digest: x.critical.image["docker-manifest-digest"],
      }));

    each("cosign verify --key: every signed manifest, read through cosign's <digest>.sig tag", async (t) => {
      for (const { kind, digest } of signed()) {
        const r = await verify(["--verbose", "--key", p.keys.pub, `${t.repository}@${digest}`]);
        expect(r.code, `${kind} ${digest}:\n${r.stderr}`).toBe(0);
        expect(payloads(r.stdout)).toEqual([{ reference: REPOSITORY, digest }]);
        expect(requests(r.stderr)).toContain(`GET /v2/aicr/manifests/${digest.replace(":", "-")}.sig`);
        expect(r.stderr).not.toContain("TUF"); // nothing asked of the network but the registry
      }
      const byTag = await verify(["--key", p.keys.pub, `${t.repository}:v${VERSION}`]);
      expect(byTag.code, byTag.stderr).toBe(0);
      expect(payloads(byTag.stdout)).toEqual([{ reference: REPOSITORY, digest: p.graph.root.digest }]);
    });

    each(
      "cosign verify --key --experimental-oci11: the referrer signatures, the .sig tag never read",
      async (t) => {
        for (const { kind, digest } of signed()) {
          const r = await verify([
            "--verbose",
            "--experimental-oci11",
            "--key",
            p.keys.pub,
            `${t.repository}@${digest}`,
          ]);
          expect(r.code, `${kind} ${digest}:\n${r.stderr}`).toBe(0);
          expect(payloads(r.stdout)).toEqual([{ reference: REPOSITORY, digest }]);
          const seen = requests(r.stderr);
          const referrer = p.graph.only(digest, ARTIFACT.cosignSignature).digest;
          expect(seen).toContain(`GET /v2/aicr/referrers/${digest}`);
          expect(seen).toContain(`GET /v2/aicr/manifests/${referrer}`);
          expect(seen.filter((s) => s.endsWith(".sig"))).toEqual([]);
          // the tag scheme's index is what cosign falls back to where the registry has no referrers API
          expect(seen.includes(`GET /v2/aicr/manifests/${digest.replace(":", "-")}`)).toBe(
            t.via === "tag-scheme",
          );
        }
      },
    );

    each("cosign verify with a key that did not sign: refused, legacy and OCI 1.1 alike", async (t) => {
      for (const oci11 of [[], ["--experimental-oci11"]]) {
        const r = await verify([...oci11, "--key", stranger.pub, `${t.repository}@${p.graph.root.digest}`]);
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain("no matching signatures");
      }
    });

    test("cosign verify-blob accepts SHA256SUMS signed in aicr's format (npm run image --key writes SHA256SUMS.sig so); an altered file is refused", async () => {
      const sums = join(p.work, "SHA256SUMS");
      const bytes = new Uint8Array(readFileSync(join(DIST, "SHA256SUMS")));
      writeFileSync(sums, bytes);
      const key = loadSigningKey(readFileSync(p.keys.key, "utf8"), { flag: "--key", path: p.keys.key });
      writeFileSync(`${sums}.sig`, signBlob(bytes, key));
      const args = [cosign.path as string, "verify-blob", ...offline.verifyBlob, "--key", p.keys.pub];
      const good = await run([...args, "--signature", `${sums}.sig`, sums], { env: offline.env });
      expect(good.code, good.stderr).toBe(0);
      expect(good.stderr).toContain("Verified OK");
      expect(good.stderr).not.toContain("TUF");
      writeFileSync(sums, `${new TextDecoder().decode(bytes)}# appended\n`);
      const altered = await run([...args, "--signature", `${sums}.sig`, sums], { env: offline.env });
      expect(altered.code).not.toBe(0);
    });

    test("a key pair from cosign generate-key-pair: aicr image sign takes cosign.key (COSIGN_PASSWORD), cosign and aicr image verify take cosign.pub", async () => {
      const dir = join(p.work, "cosign-keys");
      mkdirSync(dir);
      const password = "cosign-Pass-27";
      await ok([cosign.path as string, "generate-key-pair"], {
        cwd: dir,
        env: { ...offline.env, COSIGN_PASSWORD: password },
      });
      expect(readFileSync(join(dir, "cosign.key"), "utf8")).toStartWith(
        "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----",
      );
      const archive = join(p.work, "cosign-signed.tar");
      await signedCopy(p.signed, archive, join(dir, "cosign.key"), baseEnv({ COSIGN_PASSWORD: password }));
      const t = p.targets[0] as Target;
      const repository = `${t.host}/aicr-cosign-key`;
      const pushed = await aicr([
        "image",
        "push",
        archive,
        `${repository}:v${VERSION}`,
        "--plain-http",
        "--mount-from",
        "aicr",
      ]);
      expect(pushed.code, pushed.stderr).toBe(0);
      const pub = join(dir, "cosign.pub");
      for (const { kind, digest } of signed()) {
        const r = await verify(["--key", pub, `${repository}@${digest}`]);
        expect(r.code, `${kind} ${digest}:\n${r.stderr}`).toBe(0);
      }
      const ours = await aicr(["image", "verify", `${repository}:v${VERSION}`, "--key", pub, "--plain-http"]);
      expect(ours.code, ours.stdout + ours.stderr).toBe(0);
      // the first key's signatures travelled too: both keys verify the one image
      const first = await aicr([
        "image",
        "verify",
        `${repository}:v${VERSION}`,
        "--key",
        p.keys.pub,
        "--plain-http",
      ]);
      expect(first.code, first.stdout + first.stderr).toBe(0);
    });
  },
);

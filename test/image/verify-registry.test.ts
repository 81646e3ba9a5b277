/**
 * aicr image verify against real registries, after aicr's own push of a signed archive: Debian's
 * docker-registry 2.8 (TLS with the test CA, htpasswd; no referrers API: the tag scheme) and
 * go-containerregistry's registry with the referrers API (test/tools). What a registry serves that
 * does not match its digests — a layer, a manifest — is injected by a proxy at the HTTP boundary;
 * so are a redirect to blob storage and a registry whose referrers tag is gone (cosign's .sig tag
 * still signs the index).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { createLogger } from "../../src/core/log.ts";
import { readOciArchive } from "../../src/image/_archive.ts";
import { appendReferrers } from "../../src/image/_layout.ts";
import { referrersTag } from "../../src/image/_referrers.ts";
import { parsePushTarget } from "../../src/image/registry/_reference.ts";
import type { Credentials } from "../../src/image/registry/credentials.ts";
import { pushArchive } from "../../src/image/registry/push.ts";
import { signArchive } from "../../src/image/sign/sign-archive.ts";
import { resolveVerifyInputs } from "../../src/image/verify/options.ts";
import type { VerifyReport } from "../../src/image/verify/report.ts";
import { verifyImage } from "../../src/image/verify/verify.ts";
import { basic } from "../registry/helpers.ts";
import { type CountingProxy, startProxy } from "../registry/proxy.ts";
import { type Registry, startRegistry } from "../registry/registry.ts";
import { rejection } from "../support/reject.ts";
import { type ReferrersRegistry, startReferrersRegistry, tool } from "../tools/tools.ts";
import { newKey, sbomFor, type TestImage, testImage, writeFiles } from "./_verify-fixtures.ts";

const USER = "victor";
const PASSWORD = "verify-me-Secret-7";
const creds: Credentials = basic(USER, PASSWORD);
const key = newKey();
const other = newKey();
let reg: Registry;
let files: ReturnType<typeof writeFiles>;
const quiet = () => createLogger({ write: () => {} });

beforeAll(async () => {
  reg = await startRegistry({ tls: true, htpasswd: { user: USER, password: PASSWORD } });
  files = writeFiles({ "key.pub": key.pub, "ca.pem": reg.caPem });
}, 60_000);
afterAll(async () => {
  await reg?.stop();
  rmSync(files.dir, { recursive: true, force: true });
}, 30_000);

async function push(
  archive: Uint8Array,
  destination: string,
  o: { ca?: string; plainHttp?: boolean; credentials?: Credentials } = { ca: reg.caPem, credentials: creds },
): Promise<string> {
  const result = await pushArchive({
    archive: readOciArchive(archive),
    archivePath: "test.tar",
    target: parsePushTarget(destination),
    retry: { attempts: 2, baseDelayMs: 10 },
    signal: new AbortController().signal,
    log: quiet(),
    ...o,
  });
  return result.digest;
}

async function verify(
  image: string,
  o: { caFile?: string; plainHttp?: boolean; credentials?: Credentials | undefined } = {
    caFile: files["ca.pem"],
    credentials: creds,
  },
): Promise<VerifyReport> {
  const inputs = await resolveVerifyInputs(
    { image, key: files["key.pub"], caFile: o.caFile, plainHttp: o.plainHttp },
    async () => "",
  );
  return verifyImage({
    inputs,
    credentials: o.credentials,
    retry: { attempts: 2, baseDelayMs: 10 },
    signal: new AbortController().signal,
    log: quiet(),
  });
}

const failures = (r: VerifyReport) => r.checks.filter((c) => !c.ok);

describe("docker-registry 2.8 (the referrers tag scheme), TLS and basic auth", () => {
  const image = testImage();
  const amd = image.manifests.amd64!.digest;
  const signed = signArchive(image.archive, key.signing).bytes;

  beforeAll(async () => {
    await push(signed, `${reg.host}/team/aicr:v1`);
  }, 60_000);

  test("by tag and by digest: every check passes", async () => {
    const byTag = await verify(`${reg.host}/team/aicr:v1`);
    expect(failures(byTag)).toEqual([]);
    expect(byTag).toMatchObject({ ok: true, reference: `${reg.host}/team/aicr:v1`, digest: image.root });
    expect(byTag.checks).toHaveLength(9);
    const byDigest = await verify(`${reg.host}/team/aicr@${image.root}`);
    expect(byDigest.ok).toBe(true);
    expect(byDigest.reference).toBe(`${reg.host}/team/aicr@${image.root}`);
    expect(byDigest.checks).toEqual(byTag.checks);
  }, 60_000);

  test("an image that is not there: NOT_FOUND (3) naming it", async () => {
    const err = await rejection(verify(`${reg.host}/team/aicr:nope`));
    expect(err.code).toBe("NOT_FOUND");
    expect(err.exitCode).toBe(3);
    expect(err.message).toBe(`${reg.host}/team/aicr:nope is not in the registry`);
  }, 30_000);

  test("no credentials: UNAUTHORIZED from the registry, with docker login as the remedy", async () => {
    const err = await rejection(verify(`${reg.host}/team/aicr:v1`, { caFile: files["ca.pem"] }));
    expect(err.code).toBe("UNAUTHORIZED");
    expect(err.remedy).toContain(`docker login ${reg.host}`);
  }, 30_000);

  test("a swapped SBOM pushed beside the image: that manifest's SBOM check fails", async () => {
    const partial = testImage({ platforms: 1, without: { amd64: ["sbom"] } });
    const m = partial.manifests.amd64!;
    const swapped = appendReferrers(signArchive(partial.archive, key.signing).bytes, [sbomFor(m, "amd64")]);
    await push(swapped, `${reg.host}/team/swapped:v1`);
    const f = failures(await verify(`${reg.host}/team/swapped:v1`));
    expect(f.map((c) => [c.subject, c.check])).toEqual([[m.digest, "sbom"]]);
    expect(f[0]!.reason).toStartWith(`the SBOM attached to ${m.digest} is not signed by this key`);
  }, 60_000);

  test("signed by another key: every signature fails", async () => {
    const theirs = testImage({ platforms: 1 });
    await push(signArchive(theirs.archive, other.signing).bytes, `${reg.host}/team/theirs:v1`);
    const r = await verify(`${reg.host}/team/theirs:v1`);
    expect(failures(r).map((c) => c.check)).toEqual(["signature", "sbom", "provenance"]);
    expect(failures(r)[0]!.reason).toBe(
      `no signature by this key for ${theirs.root} (one signature, by another key)`,
    );
  }, 60_000);

  describe("what a proxy between here and the registry changes", () => {
    let proxy: CountingProxy;
    let fault: ((path: string) => Response | undefined) | undefined;
    const oci = readOciArchive(signed);
    const amdManifest = oci.images.find((i) => i.descriptor.digest === amd)!.manifest;
    const layer = amdManifest.layers[1]!;
    const layerBytes = oci.blob(layer.digest)!;
    const armDigest = image.manifests.arm64!.digest;

    beforeAll(() => {
      proxy = startProxy({ upstream: reg.url, ca: reg.caPem, fault: (req) => fault?.(req.path) });
    });
    afterAll(() => proxy?.stop());
    const viaProxy = () => verify(`${proxy.host}/team/aicr:v1`, { plainHttp: true, credentials: creds });

    test("a layer with other bytes: the blobs check names the layer and the digest of what came", async () => {
      const altered = Uint8Array.from(layerBytes);
      altered[10] = altered[10]! ^ 1;
      fault = (path) =>
        path === `/v2/team/aicr/blobs/${layer.digest}` ? new Response(altered, { status: 200 }) : undefined;
      const f = failures(await viaProxy());
      expect(f.map((c) => [c.subject, c.check])).toEqual([[amd, "blobs"]]);
      expect(f[0]!.reason).toMatch(new RegExp(`^layer ${layer.digest} has digest sha256:[a-f0-9]{64}$`));
    }, 60_000);

    test("a layer longer than its descriptor says: reading stops there", async () => {
      fault = (path) =>
        path === `/v2/team/aicr/blobs/${layer.digest}`
          ? new Response(new Uint8Array([...layerBytes, 0, 0]), { status: 200 })
          : undefined;
      const f = failures(await viaProxy());
      expect(f[0]!.reason).toBe(
        `layer ${layer.digest} has more than the ${layer.size} bytes its descriptor says`,
      );
    }, 60_000);

    test("a manifest asked for by digest answered with another: the blobs check names both digests", async () => {
      const amdBytes = oci.blob(amd)!;
      fault = (path) =>
        path === `/v2/team/aicr/manifests/${armDigest}`
          ? new Response(amdBytes, {
              headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" },
            })
          : undefined;
      const f = failures(await viaProxy());
      expect(f.map((c) => [c.subject, c.check])).toEqual([[armDigest, "blobs"]]);
      expect(f[0]!.reason).toBe(`manifest ${armDigest} has digest ${amd}`);
    }, 60_000);

    test("a blob redirected to its storage: followed, and the blob checked there", async () => {
      fault = (path) => {
        if (path === `/v2/team/aicr/blobs/${layer.digest}`)
          return new Response(null, {
            status: 307,
            headers: { location: `http://localhost:${proxy.host.split(":")[1]}/storage/${layer.digest}` },
          });
        if (path === `/storage/${layer.digest}`) return new Response(layerBytes);
        return undefined;
      };
      const r = await viaProxy();
      expect(failures(r)).toEqual([]);
      expect(proxy.seen.some((s) => s.path === `/storage/${layer.digest}`)).toBe(true);
    }, 60_000);

    test("the referrers tag of the index gone: cosign's .sig tag still carries its signature", async () => {
      fault = (path) =>
        path === `/v2/team/aicr/manifests/${referrersTag(image.root)}`
          ? new Response('{"errors":[{"code":"MANIFEST_UNKNOWN"}]}', { status: 404 })
          : undefined;
      const r = await viaProxy();
      expect(failures(r)).toEqual([]);
      expect(r.checks[0]).toMatchObject({
        kind: "index",
        check: "signature",
        referrer: `tag ${referrersTag(image.root)}.sig`,
      });
    }, 60_000);
  });
});

const registryTool = await tool("registry");
const cosign = await tool("cosign");

describe.skipIf(registryTool.missing !== undefined)(
  `a registry with the referrers API (go-containerregistry's)${registryTool.missing ? ` (skipped: ${registryTool.missing})` : ""}`,
  () => {
    let api: ReferrersRegistry;
    beforeAll(async () => {
      api = await startReferrersRegistry();
    }, 30_000);
    afterAll(() => api?.stop());

    test("a pushed signed archive verifies; one without provenance does not", async () => {
      const image: TestImage = testImage();
      await push(signArchive(image.archive, key.signing).bytes, `${api.host}/team/aicr:v1`, {
        plainHttp: true,
      });
      const r = await verify(`${api.host}/team/aicr:v1`, { plainHttp: true });
      expect(failures(r)).toEqual([]);
      expect(r.checks).toHaveLength(9);

      const partial = testImage({ platforms: 1, without: { amd64: ["provenance"] } });
      await push(signArchive(partial.archive, key.signing).bytes, `${api.host}/team/partial:v1`, {
        plainHttp: true,
      });
      const f = failures(await verify(`${api.host}/team/partial:v1`, { plainHttp: true }));
      expect(f.map((c) => c.reason)).toEqual([`no provenance is attached to ${partial.root}`]);
    }, 60_000);

    test.skipIf(cosign.missing !== undefined)(
      `an image cosign signed (its legacy .sig tag): the signature by its key is verified${cosign.missing ? ` (skipped: ${cosign.missing})` : ""}`,
      async () => {
        const work = writeFiles({});
        try {
          const unsigned = testImage({ platforms: 1 });
          await push(unsigned.archive, `${api.host}/team/cosigned:v1`, { plainHttp: true });
          const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work.dir, COSIGN_PASSWORD: "pw" };
          const run = async (args: string[]) => {
            const p = Bun.spawn([cosign.path!, ...args], {
              cwd: work.dir,
              env,
              stdout: "pipe",
              stderr: "pipe",
            });
            const [out, err, code] = await Promise.all([
              new Response(p.stdout).text(),
              new Response(p.stderr).text(),
              p.exited,
            ]);
            if (code !== 0) throw new Error(`cosign ${args[0]} exited ${code}: ${out}${err}`);
          };
          await run(["generate-key-pair"]);
          await run([
            "sign",
            "--key",
            "cosign.key",
            "--tlog-upload=false",
            "--allow-http-registry",
            "-y",
            `${api.host}/team/cosigned@${unsigned.root}`,
          ]);
          const inputs = await resolveVerifyInputs(
            { image: `${api.host}/team/cosigned:v1`, key: `${work.dir}/cosign.pub`, plainHttp: true },
            async () => "",
          );
          const r = await verifyImage({ inputs, signal: new AbortController().signal, log: quiet() });
          expect(r.checks.find((c) => c.check === "signature")).toMatchObject({
            ok: true,
            referrer: `tag ${referrersTag(unsigned.root)}.sig`,
          });
          // its SBOM and provenance were not signed by cosign's key
          expect(failures(r).map((c) => c.check)).toEqual(["sbom", "provenance"]);
        } finally {
          rmSync(work.dir, { recursive: true, force: true });
        }
      },
      120_000,
    );
  },
);

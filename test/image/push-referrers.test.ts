/**
 * Referrers (SBOMs, provenance, signatures) pushed with the image: to Debian's docker-registry 2.8,
 * which has no referrers API (the OCI referrers tag scheme, and cosign's legacy .sig tags), and to
 * go-containerregistry's registry with the API (test/tools). What each stores, what listReferrers
 * and oras discover read back, merging with what the tags already hold, and that a second push
 * writes nothing but the tag.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../../src/core/log.ts";
import { readOciArchive } from "../../src/image/_archive.ts";
import {
  canonicalJson,
  type Descriptor,
  type Index,
  type Manifest,
  MEDIA,
  sha256Digest,
} from "../../src/image/_oci.ts";
import {
  ARTIFACT,
  type Artifact,
  COSIGN_SIGNATURE_ANNOTATION,
  referrersTag,
} from "../../src/image/_referrers.ts";
import { RegistryClient } from "../../src/image/registry/_client.ts";
import { listReferrers } from "../../src/image/registry/_referrers.ts";
import { buildTestArchive, type TestArchive, testSignature } from "../registry/archive.ts";
import { basic, basicAuth, blobDigest, pushTo, readBack } from "../registry/helpers.ts";
import { type CountingProxy, startProxy } from "../registry/proxy.ts";
import { type Registry, startRegistry } from "../registry/registry.ts";
import { type ReferrersRegistry, startReferrersRegistry, tool } from "../tools/tools.ts";

const USER = "dave";
const PASSWORD = "pw-dave";
const creds = basic(USER, PASSWORD);
const auth = { auth: basicAuth(USER, PASSWORD) };
let reg: Registry;
let proxy: CountingProxy | undefined;

const apiRegistry = await tool("registry");
const oras = await tool("oras");

beforeAll(async () => {
  reg = await startRegistry({ htpasswd: { user: USER, password: PASSWORD } });
}, 60_000);
afterAll(() => reg?.stop(), 30_000);
afterEach(() => proxy?.stop());

const json = <T>(bytes: Uint8Array): T => JSON.parse(new TextDecoder().decode(bytes)) as T;
const subjectOf = (a: Artifact): string => a.subject.digest;

/** The referrers of `digest` in the archive, as a referrers list names them. */
/** Where the order is the lister's own (the referrers API, oras in a layout): compared by digest. */
const byDigest = (list: Descriptor[]) => [...list].sort((a, b) => (a.digest < b.digest ? -1 : 1));
const listed = (archive: TestArchive, digest: string): Descriptor[] =>
  readOciArchive(archive.bytes)
    .referrersOf(digest)
    .map((r) => r.descriptor);

function client(host: string, repository: string, credentials = creds): RegistryClient {
  return new RegistryClient({
    registry: host,
    apiHost: host,
    repository,
    plainHttp: true,
    credentials,
    scopes: [`repository:${repository}:pull`],
    signal: new AbortController().signal,
    log: createLogger({ write: () => undefined }),
  });
}

describe("a registry without the referrers API (docker-registry 2.8): the tag scheme", () => {
  const archive = buildTestArchive({ tag: "v1", referrers: true });
  // the index, both platform manifests and the SBOM that is signed too
  const subjects = [...new Set(archive.referrers.map(subjectOf))];

  test("every referrer by digest, each subject's sha256-<hex> index, cosign's .sig tags", async () => {
    const { result, log } = await pushTo(`${reg.host}/ref/aicr`, archive, {
      plainHttp: true,
      credentials: creds,
    });
    expect(result.referrers).toEqual({
      count: 8,
      put: 8,
      skipped: 0,
      via: "tag-scheme",
      tags: { referrers: 4, signatures: 4 },
    });
    expect(log.some((l) => l.includes("and 8 referrers"))).toBe(true);
    for (const a of archive.referrers) {
      expect((await readBack(reg.url, "ref/aicr", a.descriptor.digest, auth)).bytes).toEqual(a.manifest);
      for (const b of a.blobs) expect(await blobDigest(reg.url, "ref/aicr", b.digest, auth)).toBe(b.digest);
    }
    for (const subject of subjects) {
      const index = await readBack(reg.url, "ref/aicr", referrersTag(subject), auth);
      expect(index.mediaType).toBe(MEDIA.index);
      const body = json<Index>(index.bytes);
      expect(body.mediaType).toBe(MEDIA.index);
      expect(body.manifests).toEqual(listed(archive, subject));
      // what verify reads: the same list through listReferrers
      expect(await listReferrers(client(reg.host, "ref/aicr"), "ref/aicr", subject)).toEqual({
        via: "tag-scheme",
        manifests: listed(archive, subject),
      });
    }
    expect(await listReferrers(client(reg.host, "ref/aicr"), "ref/aicr", sha256Digest("none"))).toEqual({
      via: "tag-scheme",
      manifests: [],
    });
  }, 60_000);

  test.skipIf(oras.missing !== undefined)(
    `oras discover finds them through the tag scheme${oras.missing ? ` (skipped: ${oras.missing})` : ""}`,
    async () => {
      for (const subject of subjects) {
        const found = await discover([
          "--distribution-spec",
          "v1.1-referrers-tag",
          "-u",
          USER,
          "-p",
          PASSWORD,
          `${reg.host}/ref/aicr@${subject}`,
        ]);
        expect(found).toEqual(listed(archive, subject));
      }
    },
    60_000,
  );

  test("the .sig tag: cosign's form — simple-signing layers with their signatures, diff_ids = their digests", async () => {
    for (const subject of subjects) {
      const sig = archive.referrers.find(
        (a) => subjectOf(a) === subject && a.descriptor.artifactType === ARTIFACT.cosignSignature,
      )!;
      const layer = json<Manifest>(sig.manifest).layers[0]!;
      const back = await readBack(reg.url, "ref/aicr", `${referrersTag(subject)}.sig`, auth);
      const manifest = json<Manifest>(back.bytes);
      expect(manifest.mediaType).toBe(MEDIA.manifest);
      expect(manifest.layers).toEqual([
        {
          mediaType: ARTIFACT.simpleSigning,
          size: layer.size,
          digest: layer.digest,
          annotations: layer.annotations,
        },
      ]);
      expect(Object.keys(manifest.layers[0]!)).toEqual(["mediaType", "size", "digest", "annotations"]);
      expect(manifest.layers[0]!.annotations?.[COSIGN_SIGNATURE_ANNOTATION]).toBeTruthy();
      expect(manifest.config.mediaType).toBe(MEDIA.config);
      const config = await fetch(`${reg.url}/v2/ref/aicr/blobs/${manifest.config.digest}`, {
        headers: { authorization: auth.auth },
      });
      expect(await config.text()).toBe(
        `{"architecture":"","created":"0001-01-01T00:00:00Z","history":[{"created":"0001-01-01T00:00:00Z"}],"os":"","rootfs":{"type":"layers","diff_ids":["${layer.digest}"]},"config":{}}`,
      );
    }
  }, 60_000);

  test("a second push writes nothing but the tag", async () => {
    proxy = startProxy({ upstream: reg.url });
    const { result, log } = await pushTo(`${proxy.host}/ref/aicr`, archive, {
      plainHttp: true,
      credentials: creds,
    });
    expect(proxy.writes()).toEqual([{ method: "PUT", path: "/v2/ref/aicr/manifests/v1" }]);
    expect(result.referrers).toEqual({
      count: 8,
      put: 0,
      skipped: 8,
      via: "tag-scheme",
      tags: { referrers: 0, signatures: 0 },
    });
    expect(log.some((l) => l.includes("and 8 referrers"))).toBe(true);
  }, 60_000);

  test("what the tags already hold is kept: another tool's referrer, another key's signature", async () => {
    const single = buildTestArchive({ tag: "v2", platforms: 1, referrers: true });
    const repo = "ref/merge";
    // first an unrelated referrer in the tag index and another signature under .sig, as other tools leave them
    // (distribution checks that an index's manifests exist: the other tool's referrer is a real manifest)
    const seed = buildTestArchive({ tag: "seed", platforms: 1 });
    await pushTo(`${reg.host}/${repo}`, seed, { plainHttp: true, credentials: creds });
    const other: Descriptor = {
      mediaType: MEDIA.manifest,
      digest: seed.digest,
      size: seed.manifests[0]!.bytes.length,
      artifactType: "application/vnd.example+json",
    };
    const theirIndex = canonicalJson({ schemaVersion: 2, mediaType: MEDIA.index, manifests: [other] });
    const theirSig = testSignature({ mediaType: MEDIA.manifest, digest: single.digest, size: 1 });
    const theirLayer = json<Manifest>(theirSig.manifest).layers[0]!;
    const put = async (ref: string, type: string, bytes: Uint8Array) => {
      const res = await fetch(`${reg.url}/v2/${repo}/manifests/${ref}`, {
        method: "PUT",
        headers: { "content-type": type, authorization: auth.auth },
        body: bytes,
      });
      expect(res.status).toBe(201);
    };
    const upload = async (data: Uint8Array) => {
      const start = await fetch(`${reg.url}/v2/${repo}/blobs/uploads/`, {
        method: "POST",
        headers: { authorization: auth.auth },
      });
      const at = new URL(start.headers.get("location")!, reg.url);
      at.searchParams.set("digest", sha256Digest(data));
      const res = await fetch(at, { method: "PUT", headers: { authorization: auth.auth }, body: data });
      expect(res.status).toBe(201);
    };
    for (const b of theirSig.blobs) await upload(b.data);
    const theirConfig = canonicalJson({
      architecture: "",
      os: "",
      rootfs: { type: "layers", diff_ids: [theirLayer.digest] },
      config: {},
    });
    await upload(theirConfig);
    const theirSigManifest = canonicalJson({
      schemaVersion: 2,
      mediaType: MEDIA.manifest,
      config: { mediaType: MEDIA.config, size: theirConfig.length, digest: sha256Digest(theirConfig) },
      layers: [theirLayer],
    });
    await put(referrersTag(single.digest), MEDIA.index, theirIndex);
    await put(`${referrersTag(single.digest)}.sig`, MEDIA.manifest, theirSigManifest);

    const { result } = await pushTo(`${reg.host}/${repo}`, single, { plainHttp: true, credentials: creds });
    expect(result.referrers.tags).toEqual({ referrers: 2, signatures: 2 });
    const index = json<Index>((await readBack(reg.url, repo, referrersTag(single.digest), auth)).bytes);
    expect(index.manifests).toEqual([other, ...listed(single, single.digest)]);
    const sig = json<Manifest>(
      (await readBack(reg.url, repo, `${referrersTag(single.digest)}.sig`, auth)).bytes,
    );
    const ours = json<Manifest>(
      single.referrers.find((a) => a.descriptor.artifactType === ARTIFACT.cosignSignature)!.manifest,
    ).layers[0]!;
    expect(sig.layers.map((l) => l.annotations?.[COSIGN_SIGNATURE_ANNOTATION])).toEqual([
      theirLayer.annotations?.[COSIGN_SIGNATURE_ANNOTATION],
      ours.annotations?.[COSIGN_SIGNATURE_ANNOTATION],
    ]);
    // and again: nothing to add
    const again = await pushTo(`${reg.host}/${repo}`, single, { plainHttp: true, credentials: creds });
    expect(again.result.referrers.tags).toEqual({ referrers: 0, signatures: 0 });
  }, 60_000);
});

describe.skipIf(apiRegistry.missing !== undefined)(
  `a registry with the referrers API (go-containerregistry's, test/tools)${apiRegistry.missing ? ` (skipped: ${apiRegistry.missing})` : ""}`,
  () => {
    let api: ReferrersRegistry;
    beforeAll(async () => {
      api = await startReferrersRegistry();
    }, 60_000);
    afterAll(() => api?.stop());
    const archive = buildTestArchive({ tag: "v1", referrers: true });

    for (const subjectHeader of [true, false]) {
      test(`it lists them itself: no tag-scheme index, only cosign's .sig tags (OCI-Subject ${subjectHeader ? "sent" : "dropped: the endpoint is asked"})`, async () => {
        const repo = `api/aicr-${subjectHeader ? "header" : "probe"}`;
        proxy = startProxy({ upstream: api.url, ...(subjectHeader ? {} : { dropHeaders: ["oci-subject"] }) });
        const { result } = await pushTo(`${proxy.host}/${repo}`, archive, { plainHttp: true });
        expect(result.referrers).toEqual({
          count: 8,
          put: 8,
          skipped: 0,
          via: "api",
          tags: { referrers: 0, signatures: 4 },
        });
        const tagPuts = proxy.writes().filter((w) => w.method === "PUT" && /manifests\/sha256-/.test(w.path));
        expect(tagPuts).toHaveLength(4);
        for (const w of tagPuts) expect(w.path).toEndWith(".sig");
        for (const subject of new Set(archive.referrers.map(subjectOf))) {
          const listedHere = await listReferrers(client(api.host, repo, undefined), repo, subject);
          expect(listedHere.via).toBe("api");
          expect(byDigest(listedHere.manifests)).toEqual(byDigest(listed(archive, subject)));
        }

        proxy.seen.length = 0;
        const again = await pushTo(`${proxy.host}/${repo}`, archive, { plainHttp: true });
        expect(proxy.writes()).toEqual([{ method: "PUT", path: `/v2/${repo}/manifests/v1` }]);
        expect(again.result.referrers).toMatchObject({ put: 0, skipped: 8, via: "api" });
      }, 60_000);
    }

    test.skipIf(oras.missing !== undefined)(
      `oras discover finds them through the API${oras.missing ? ` (skipped: ${oras.missing})` : ""}`,
      async () => {
        await pushTo(`${api.host}/api/oras`, archive, { plainHttp: true });
        const amd = archive.manifests.find((m) => m.mediaType === MEDIA.manifest)!.digest;
        const found = await discover([
          "--distribution-spec",
          "v1.1-referrers-api",
          `${api.host}/api/oras@${amd}`,
        ]);
        expect(byDigest(found)).toEqual(byDigest(listed(archive, amd)));
      },
      60_000,
    );
  },
);

describe.skipIf(oras.missing !== undefined)(
  `the archive's OCI layout${oras.missing ? ` (skipped: ${oras.missing})` : ""}`,
  () => {
    test("oras discover reads each platform manifest's referrers from the extracted layout", async () => {
      const archive = buildTestArchive({ tag: "v1", referrers: true });
      const dir = mkdtempSync(join(tmpdir(), "aicr-referrers-layout-"));
      try {
        writeFileSync(join(dir, "image.tar"), archive.bytes);
        mkdirSync(join(dir, "layout"));
        expect(
          Bun.spawnSync(["tar", "-xf", join(dir, "image.tar"), "-C", join(dir, "layout")]).exitCode,
        ).toBe(0);
        // oras gathers a layout's referrers in an order of its own (it varies between runs)
        expect(byDigest(await discover(["--oci-layout", `${join(dir, "layout")}:v1`]))).toEqual(
          byDigest(listed(archive, archive.digest)),
        );
        for (const m of archive.manifests.filter((x) => x.mediaType === MEDIA.manifest)) {
          const arch = JSON.parse(
            new TextDecoder().decode(archive.blobs.get(json<Manifest>(m.bytes).config.digest)!),
          ).architecture;
          const found = await discover([
            "--oci-layout",
            `${join(dir, "layout")}:v1`,
            "--platform",
            `linux/${arch}`,
          ]);
          expect(byDigest(found)).toEqual(byDigest(listed(archive, m.digest)));
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  },
);

/** `oras discover --format json --depth 1` of a reference: the referrers it lists (descriptor fields only). */
async function discover(args: string[]): Promise<Descriptor[]> {
  const remote = args.includes("--oci-layout") ? [] : ["--plain-http"];
  const proc = Bun.spawn([oras.path!, "discover", ...remote, "--format", "json", "--depth", "1", ...args], {
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" },
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`oras discover ${args.join(" ")} failed (${code}): ${err}`);
  const doc = JSON.parse(out) as { referrers: (Descriptor & { reference?: string; referrers?: unknown })[] };
  return doc.referrers.map(({ reference: _r, referrers: _n, ...d }) => d);
}

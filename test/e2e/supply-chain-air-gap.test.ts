/**
 * The air-gapped operator's supply-chain flow through dist/aicr, as docs tell it:
 *
 *   aicr image save -o aicr.tar                      (or dist/aicr-image-<version>.tar, both platforms)
 *   aicr image sign aicr.tar --key aicr.key
 *   … the archive is copied across …
 *   aicr image push aicr.tar <registry>/aicr:<tag>
 *   aicr image verify <registry>/aicr:<tag> --key aicr.pub       exit 0 (and -o json)
 *
 * against Debian's docker-registry 2.8 (the referrers tag scheme) and go-containerregistry's
 * registry with the referrers API. Then what `aicr image verify` must refuse (exit 4, UNAUTHORIZED,
 * the reason naming the digest): a tampered layer (in the archive, and served by a registry mirror
 * that alters one byte), a swapped SBOM (unsigned, and signed by the right key but describing the
 * other platform's manifest), and signatures by another key. At the end of the saved image's flow
 * the site's own tools read the same registry: oras discovers the platform manifest's SBOM,
 * provenance and signature, and cosign verify --key accepts it offline (skipped, saying why, when
 * one did not build; supply-chain-{registries,cosign} test them in depth).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERSION } from "../image/_image.ts";
import {
  cosignOffline,
  type Graph,
  graphOf,
  type KeyPair,
  opensslKeyPair,
  type Pushed,
  pushedImage,
  run,
  signedCopy,
  type Target,
  withFlippedBlob,
  withSwappedSbom,
} from "../tools/supply-chain.ts";
import { tool } from "../tools/tools.ts";
import { aicr, type Result } from "./_aicr.ts";

const SETUP_MS = 180_000;
/** Each test spawns aicr several times (and oras, cosign): headroom on a loaded 2-core machine. */
const TEST_MS = 120_000;
const oras = await tool("oras");
const cosign = await tool("cosign");
const toolsMissing = [oras.missing, cosign.missing].filter(Boolean).join("; ");
const EXIT_UNAUTHORIZED = 4;

interface Check {
  subject: string;
  kind: string;
  platform?: string;
  check: string;
  ok: boolean;
  reason?: string;
}
interface Report {
  reference: string;
  digest: string;
  key: { fingerprint: string };
  ok: boolean;
  checks: Check[];
}

const report = (r: Result): Report => JSON.parse(r.stdout) as Report;
const failed = (r: Result) =>
  report(r)
    .checks.filter((c) => !c.ok)
    .map((c) => ({ subject: c.subject, check: c.check }));

/** Every check `aicr image verify` makes of an image with `platforms`: index signature, then per platform. */
const expectedChecks = (g: Graph) => [
  ...(g.platforms.length > 1 || g.root.digest !== g.platforms[0]?.descriptor.digest
    ? [{ subject: g.root.digest, check: "signature" }]
    : []),
  ...g.platforms.flatMap(({ descriptor }) =>
    ["blobs", "signature", "sbom", "provenance"].map((check) => ({ subject: descriptor.digest, check })),
  ),
];

describe("the air-gap flow: save → sign → copy → push → verify, and what verify refuses", () => {
  let p: Pushed;
  let stranger: KeyPair;
  beforeAll(async () => {
    p = await pushedImage();
    stranger = await opensslKeyPair(p.work, "stranger");
  }, SETUP_MS);
  afterAll(() => p?.stop(), SETUP_MS);

  const verify = (image: string, key: string, json = true) =>
    aicr([
      "image",
      "verify",
      image,
      "--key",
      key,
      ...(image.endsWith(".tar") ? [] : ["--plain-http"]),
      ...(json ? ["-o", "json"] : []),
    ]);
  const push = async (archive: string, ref: string) => {
    const r = await aicr(["image", "push", archive, ref, "--plain-http", "--mount-from", "aicr"]);
    expect(r.code, r.stderr).toBe(0);
    return r;
  };
  const target = (via: Target["via"]) => {
    const t = p.targets.find((x) => x.via === via);
    if (!t) throw new Error(`the referrers-API registry is missing: ${p.apiMissing}`);
    return t;
  };
  const vias = [["docker-registry 2.8", "tag-scheme"] as const, ["go-containerregistry", "api"] as const];

  test.each(vias)(
    `aicr image save -o a.tar → sign → copied to another directory → push → verify: exit 0, every check named; oras and cosign agree${toolsMissing ? ` (their part skipped: ${toolsMissing})` : ""} — %s (%s)`,
    async (_label, via) => {
      const t = target(via);
      const dir = join(p.work, `save-${via}`);
      mkdirSync(join(dir, "carried"), { recursive: true });
      const saved = join(dir, "aicr.tar");
      const save = await aicr(["image", "save", "-o", saved]);
      expect(save.code, save.stderr).toBe(0);
      const sign = await aicr(["image", "sign", saved, "--key", p.keys.key]);
      expect(sign.code, sign.stderr).toBe(0);
      const copy = join(dir, "carried", "aicr.tar");
      copyFileSync(saved, copy);
      const ref = `${t.repository}-saved:v${VERSION}`;
      await push(copy, ref);
      const g = graphOf(new Uint8Array(readFileSync(copy)));

      const text = await verify(ref, p.keys.pub, false);
      expect(text.code, text.stdout + text.stderr).toBe(0);
      for (const { digest } of [g.root, ...g.platforms.map((x) => x.descriptor)])
        expect(text.stdout).toContain(digest);
      const json = await verify(ref, p.keys.pub);
      expect(json.code, json.stderr).toBe(0);
      const r = report(json);
      expect(r.ok).toBe(true);
      expect(r.digest).toBe(g.root.digest);
      expect(r.checks.map((c) => ({ subject: c.subject, check: c.check }))).toEqual(expectedChecks(g));
      expect(r.checks.every((c) => c.ok)).toBe(true);

      // the site's own tools on the same registry, offline
      const manifest = `${t.repository}-saved@${(g.platforms[0] as Graph["platforms"][number]).descriptor.digest}`;
      const home = join(dir, "home");
      mkdirSync(home);
      const offline = cosignOffline(home);
      if (oras.path) {
        const found = await run([oras.path, "discover", "--plain-http", "--format", "json", manifest], {
          env: offline.env,
        });
        expect(found.code, found.stderr).toBe(0);
        const types = (JSON.parse(found.stdout).referrers as { artifactType: string }[]).map(
          (x) => x.artifactType,
        );
        expect(types.sort()).toEqual([
          "application/spdx+json",
          "application/vnd.dev.cosign.artifact.sig.v1+json",
          "application/vnd.in-toto+json",
        ]);
      }
      if (cosign.path) {
        const checked = await run(
          [cosign.path, "verify", ...offline.verify, "--allow-http-registry", "--key", p.keys.pub, manifest],
          { env: offline.env },
        );
        expect(checked.code, checked.stderr).toBe(0);
      }
    },
    TEST_MS,
  );

  test.each(vias)(
    "dist/aicr-image-<version>.tar (both platforms) signed, pushed, verified: exit 0 — %s (%s)",
    async (_label, via) => {
      const t = target(via);
      const ref = `${t.repository}:v${VERSION}`;
      const json = await verify(ref, p.keys.pub);
      expect(json.code, json.stdout + json.stderr).toBe(0);
      const r = report(json);
      expect(r.digest).toBe(p.graph.root.digest);
      expect(r.checks.map((c) => ({ subject: c.subject, check: c.check }))).toEqual(expectedChecks(p.graph));
      expect(p.graph.platforms).toHaveLength(2);
      // by digest too, and the archive itself before it was pushed
      expect((await verify(`${t.repository}@${p.graph.root.digest}`, p.keys.pub)).code).toBe(0);
      expect((await verify(p.signed, p.keys.pub)).code).toBe(0);
    },
    TEST_MS,
  );

  test(
    "a tampered layer in the archive: exit 4, the layer's manifest and digest named",
    async () => {
      const { descriptor } = p.graph.platforms[0] as Graph["platforms"][number];
      const manifest = p.graph.oci.images.find((i) => i.descriptor.digest === descriptor.digest)?.manifest;
      const layer = manifest?.layers.at(-1)?.digest as string;
      const tampered = join(p.work, "tampered-layer.tar");
      writeFileSync(tampered, withFlippedBlob(new Uint8Array(readFileSync(p.signed)), layer));
      const r = await verify(tampered, p.keys.pub, false);
      expect(r.code, r.stdout + r.stderr).toBe(EXIT_UNAUTHORIZED);
      expect(r.stderr).toContain("[UNAUTHORIZED]");
      expect(r.stdout + r.stderr).toContain(layer);
    },
    TEST_MS,
  );

  test(
    "a registry mirror that alters one byte of a layer: exit 4, the blobs check of that manifest fails naming the layer",
    async () => {
      const t = target("tag-scheme");
      const { descriptor } = p.graph.platforms[1] as Graph["platforms"][number];
      const layer = p.graph.oci.images
        .find((i) => i.descriptor.digest === descriptor.digest)
        ?.manifest.layers.at(-1)?.digest as string;
      const mirror = tamperingMirror(`http://${t.host}`, layer);
      try {
        const r = await verify(`127.0.0.1:${mirror.port}/aicr:v${VERSION}`, p.keys.pub);
        expect(r.code, r.stdout + r.stderr).toBe(EXIT_UNAUTHORIZED);
        expect(failed(r)).toEqual([{ subject: descriptor.digest, check: "blobs" }]);
        expect(report(r).checks.find((c) => !c.ok)?.reason).toContain(layer);
        expect(r.stderr).toContain("[UNAUTHORIZED]");
      } finally {
        mirror.stop(true);
      }
    },
    TEST_MS,
  );

  test.each(vias)(
    "a swapped SBOM (the other platform's, attached to this manifest), unsigned and then signed by the right key: exit 4 both times — %s (%s)",
    async (_label, via) => {
      const t = target(via);
      const [amd, arm] = p.graph.platforms as [Graph["platforms"][number], Graph["platforms"][number]];
      const swapped = join(p.work, `swapped-${via}.tar`);
      writeFileSync(
        swapped,
        withSwappedSbom(new Uint8Array(readFileSync(p.signed)), amd.descriptor, arm.descriptor.digest),
      );
      const unsigned = `${t.repository}-swapped:unsigned`;
      await push(swapped, unsigned);
      const r1 = await verify(unsigned, p.keys.pub);
      expect(r1.code, r1.stdout + r1.stderr).toBe(EXIT_UNAUTHORIZED);
      expect(failed(r1)).toEqual([{ subject: amd.descriptor.digest, check: "sbom" }]);

      // signed by the publisher's own key, it is still the wrong document: it names arm64's manifest
      const sign = await aicr(["image", "sign", swapped, "--key", p.keys.key]);
      expect(sign.code, sign.stderr).toBe(0);
      const resigned = `${t.repository}-swapped:signed`;
      await push(swapped, resigned);
      const r2 = await verify(resigned, p.keys.pub);
      expect(r2.code, r2.stdout + r2.stderr).toBe(EXIT_UNAUTHORIZED);
      expect(failed(r2)).toEqual([{ subject: amd.descriptor.digest, check: "sbom" }]);
      const reason = report(r2).checks.find((c) => !c.ok)?.reason ?? "";
      expect(reason).toContain(amd.descriptor.digest);
      expect(r2.stderr).toContain("[UNAUTHORIZED]");
    },
    TEST_MS,
  );

  test.each(vias)(
    "signed by another key only: exit 4, every signature check names the missing signature — %s (%s)",
    async (_label, via) => {
      const t = target(via);
      const other = join(p.work, `stranger-${via}.tar`);
      await signedCopy(p.unsigned, other, stranger.key);
      const ref = `${t.repository}-stranger:v${VERSION}`;
      await push(other, ref);
      const r = await verify(ref, p.keys.pub);
      expect(r.code, r.stdout + r.stderr).toBe(EXIT_UNAUTHORIZED);
      const bad = failed(r);
      for (const subject of [p.graph.root.digest, ...p.graph.platforms.map((x) => x.descriptor.digest)])
        expect(bad).toContainEqual({ subject, check: "signature" });
      expect(bad.every((c) => c.check !== "blobs")).toBe(true);
      expect(r.stderr).toContain("[UNAUTHORIZED]");
      // the stranger's own public key accepts it
      expect((await verify(ref, stranger.pub)).code).toBe(0);
    },
    TEST_MS,
  );
});

/**
 * A pull-through mirror of `upstream` on a free loopback port that flips the last byte of blob
 * `digest` in every GET of it: the registry-side tampering an air-gapped mirror could do.
 */
function tamperingMirror(upstream: string, digest: string) {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const res = await fetch(`${upstream}${url.pathname}${url.search}`, {
        method: req.method,
        headers: req.headers,
        redirect: "manual",
      });
      if (req.method !== "GET" || res.status !== 200 || !url.pathname.endsWith(`/blobs/${digest}`))
        return res;
      const body = new Uint8Array(await res.arrayBuffer());
      body[body.length - 1] = (body[body.length - 1] as number) ^ 0xff;
      return new Response(body, { status: 200, headers: res.headers });
    },
  });
}
